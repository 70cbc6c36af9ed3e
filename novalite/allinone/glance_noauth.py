"""noauth2 for a keystone-less Glance: the caller is who the token ``user:project`` says.

A paste filter in front of Glance's own ``context`` middleware, which then builds the
request context (and Glance's default policies decide) as behind Keystone: ``admin`` is
the administrator, every other user a member and reader of its project, so one project
cannot see or delete another's private images. The same trust as novalite's noauth2 API
(no passwords: for a test cloud on loopback). A request without a token keeps the
identity headers it carries (novalite's calls on behalf of no user send them); without
those Glance answers 401.

It runs inside Glance's process and virtualenv (it is copied beside Glance's
configuration), so it imports nothing of novalite's.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

# The identity a token replaces: what oslo.context and Glance read from the request
# (auth_token middleware removes the same before it sets its own).
_IDENTITY_PREFIXES = ('HTTP_X_IDENTITY_STATUS', 'HTTP_X_USER', 'HTTP_X_PROJECT',
                      'HTTP_X_TENANT', 'HTTP_X_DOMAIN', 'HTTP_X_ROLE', 'HTTP_X_SERVICE_',
                      'HTTP_X_IS_ADMIN_PROJECT', 'HTTP_X_SYSTEM_SCOPE',
                      'HTTP_OPENSTACK_SYSTEM_SCOPE')

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


def identity(token: str) -> dict[str, str]:
    """The identity headers (WSGI environ keys) of the token ``user:project``
    (``user`` alone: the project of that name)."""
    user_id, _sep, project_id = token.partition(':')
    roles = ['member', 'reader']
    if user_id == 'admin':
        roles.insert(0, 'admin')
    return {'HTTP_X_IDENTITY_STATUS': 'Confirmed', 'HTTP_X_USER_ID': user_id,
            'HTTP_X_PROJECT_ID': project_id or user_id, 'HTTP_X_ROLES': ','.join(roles)}


class NoAuth2:
    """Replaces the identity headers of a request that carries a token."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if token:
            for key in [k for k in environ if k.startswith(_IDENTITY_PREFIXES)]:
                del environ[key]
            environ.update(identity(token))
        return self.app(environ, start_response)


def filter_factory(global_conf: dict, **local_conf: str) -> Callable[[WSGIApp], NoAuth2]:
    """paste.deploy's entry point."""
    return NoAuth2
