"""Who is calling: the auth-strategy pipeline switch, noauth2, and the Keystone context."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import webob
from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite import context
from novalite.api.openstack import Middleware, faults, wsgi
from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication
    from paste.deploy.loadwsgi import ConfigLoader

LOG = logging.getLogger(__name__)


def pipeline_factory_v21(loader: ConfigLoader, global_conf: dict,
                         **local_conf: str) -> WSGIApplication:
    """A paste pipeline chosen by ``[api] auth_strategy``: the key of ``local_conf``."""
    names = local_conf[CONF.api.auth_strategy].split()
    app = loader.get_app(names[-1])
    for name in reversed(names[:-1]):
        app = loader.get_filter(name)(app)
    return app


def _unauthorized(message: str = 'The request you have made requires '
                                 'authentication.') -> webob.Response:
    return faults.json_fault(401, message)


class NoAuthMiddleware(Middleware):
    """Trusts the token: ``X-Auth-Token: user:project`` (``user`` alone means both).

    Only for tests and clouds without Keystone. The user ``admin`` gets the admin role;
    every user gets ``member`` and ``reader``, which Keystone's implied roles would give.
    """

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token:
            return _unauthorized()(environ, start_response)
        user_id, _sep, project_id = token.partition(':')
        project_id = project_id or user_id
        roles = ['member', 'reader']
        if user_id == 'admin':
            roles.insert(0, 'admin')
        environ[wsgi.CONTEXT_KEY] = context.RequestContext(
            user_id=user_id, project_id=project_id, roles=roles, auth_token=token,
            remote_address=environ.get('REMOTE_ADDR'),
            request_id=environ.get('openstack.request_id'),
            global_request_id=environ.get('openstack.global_request_id'))
        return self.application(environ, start_response)


class KeystoneContext(Middleware):
    """Builds the RequestContext from the headers keystonemiddleware's auth_token set."""

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        req = webob.Request(environ)
        if req.headers.get('X-Identity-Status', 'Confirmed') != 'Confirmed':
            return _unauthorized()(environ, start_response)
        if not (req.headers.get('X-User-Id') or req.headers.get('X-User')):
            LOG.debug('Neither X-User-Id nor X-User found in request')
            return _unauthorized()(environ, start_response)
        catalog = None
        if req.headers.get('X-Service-Catalog'):
            try:
                catalog = jsonutils.loads(req.headers['X-Service-Catalog'])
            except ValueError:
                return faults.json_fault(500, 'Invalid service catalog json.')(
                    environ, start_response)
        # The token's auth plugin lets later calls to other services reuse the token.
        ctx = context.RequestContext.from_environ(
            environ, remote_address=req.remote_addr, service_catalog=catalog,
            user_auth_plugin=environ.get('keystone.token_auth'))
        if ctx.user_id is None:
            ctx.user_id = req.headers.get('X-User')
        environ[wsgi.CONTEXT_KEY] = ctx
        return self.application(environ, start_response)
