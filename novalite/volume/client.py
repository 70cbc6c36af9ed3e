"""The HTTP side of the Cinder v3 client: whose credentials, which URL, which
microversion, and what Cinder's errors mean.

Built from the ``[cinder]`` keystoneauth options, as Nova's. Two ways to reach Cinder:

- with Keystone (``[cinder] auth_type`` set): a call carries the caller's own token
  (``context.auth_token``) to the endpoint of ``[cinder] endpoint_template`` (with the
  caller's project substituted) or else of the catalog (``catalog_info``,
  ``os_region_name``), so Cinder shows the caller only its own volumes. An admin
  context without a token (periodic and service work) calls as the ``[cinder]`` service
  user; any other context without one is refused (``NoUserToken``), since the service
  user would see every project's volumes. With ``[service_user]
  send_service_user_token``, every call also carries the service user's token
  (``X-Service-Token``, keystoneauth's wrapper): Cinder then accepts a user's token that
  expired during a long operation, and deletes an attachment without asking novalite
  whether the server still uses the volume;
- keystone-less (no ``auth_type``, ``endpoint_template`` naming Cinder, which runs with
  ``auth_strategy = noauth``): a call carries ``X-Auth-Token: <user>:<project>`` of the
  caller, which Cinder turns into an admin context of that user and project (a volume
  created then belongs to the caller's project), and ``X-Service-Roles: service``, the
  service token's stand-in (without it, Cinder answers 500 to an attachment's delete:
  it asks Nova first, whom it cannot find without a catalog).

Every call names its microversion (``OpenStack-API-Version: volume 3.x``): the highest
of Cinder's and novalite's, from Cinder's version document, asked once per Cinder and
remembered; below 3.44 (the attachment API as Nova uses it) nothing is sent. A call
that needs a newer microversion names it (``call(..., microversion=(3, 68))``, the
re-image of a volume); ``supports`` says beforehand whether Cinder has it. Connection
failures (refused, reset, timed out, no endpoint) are retried ``[cinder] http_retries``
times by keystoneauth, then raised as ``CinderConnectionFailed``.
"""
from __future__ import annotations

import contextlib
import threading
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import cachetools
import requests
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import service_token as ks_service_token
from keystoneauth1 import session as ks_session
from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF
from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

# The attachment API with attachment_complete, as Nova requires it.
MIN_VERSION = (3, 44)
# The newest microversion whose behaviour this client knows: 3.54 sets an attachment's
# mode at its creation. (3.66 turns down ``force`` on snapshots, which Nova's API uses.)
MAX_VERSION = (3, 54)
# The identity a keystone-less call carries when the context has none (periodic work).
NOAUTH_IDENTITY = 'novalite'
# Seconds between two tries of a call that could not connect, or that Cinder answered
# with a status worth another try; None: keystoneauth's growing delay (from 0.5 s).
RETRY_DELAY: float | None = None

_CONNECT_ERRORS = (ks_exc.ConnectionError, ks_exc.EndpointNotFound, ks_exc.DiscoveryFailure)

_SESSION: ks_session.Session | None = None
_AUTHS: dict[str, ks_plugin.BaseAuthPlugin | None] = {}
_LOCK = threading.Lock()
# Cinder's (min, max) microversions by root URL: asked once, they rarely change.
_VERSIONS: cachetools.LRUCache[str, tuple[tuple[int, int], tuple[int, int]]] = \
    cachetools.LRUCache(maxsize=16)
_VERSIONS_LOCK = threading.Lock()


class NoUserToken(exception.NotAuthorized):
    """A user call to a Keystone-authenticated Cinder from a context with no token."""

    msg_fmt = 'No token of the caller (project %(project_id)s) to call Cinder with.'
    code = 401


def _session() -> ks_session.Session:
    """The ``[cinder]`` session (TLS, timeouts), without credentials: each call brings
    its own."""
    global _SESSION
    if _SESSION is None:
        with _LOCK:
            if _SESSION is None:
                if CONF.cinder.debug:
                    logging.getLogger('novalite.volume').logger.setLevel(logging.DEBUG)
                _SESSION = ks_loading.load_session_from_conf_options(CONF, 'cinder')
    return _SESSION


def _service_auth(group: str) -> ks_plugin.BaseAuthPlugin | None:
    """The service user of ``[group] auth_type`` (None without one), loaded once."""
    if group not in _AUTHS:
        with _LOCK:
            if group not in _AUTHS:
                _AUTHS[group] = ks_loading.load_auth_from_conf_options(CONF, group) \
                    if CONF[group].auth_type else None
    return _AUTHS[group]


def reset() -> None:
    """Forget the session, service users and version documents (after the options
    changed, in tests)."""
    global _SESSION
    _SESSION = None
    _AUTHS.clear()
    with _VERSIONS_LOCK:
        _VERSIONS.clear()


def keystone() -> bool:
    """Whether Cinder is reached through Keystone (else keystone-less)."""
    return bool(CONF.cinder.auth_type)


def _auth(context: RequestContext) -> ks_plugin.BaseAuthPlugin | None:
    """Whose credentials a call on behalf of ``context`` carries (see the module
    docstring); None: keystone-less.

    :raises NoUserToken:
    """
    if not keystone():
        return None
    if context.auth_token:
        user_auth = context.get_auth_plugin()
    elif context.is_admin:
        service = _service_auth('cinder')
        assert service is not None
        user_auth = service
    else:
        raise NoUserToken(project_id=context.project_id)
    if not CONF.service_user.send_service_user_token:
        return user_auth
    service_auth = _service_auth('service_user')
    if service_auth is None:
        LOG.warning('[service_user] send_service_user_token is set but [service_user] '
                    'auth_type is not: Cinder gets no service token.')
        return user_auth
    return ks_service_token.ServiceTokenAuthWrapper(user_auth=user_auth,
                                                    service_auth=service_auth)


def _noauth_identity(context: RequestContext) -> tuple[str, str]:
    user = context.user_id or NOAUTH_IDENTITY
    return user, context.project_id or user


def _endpoint(context: RequestContext, auth: ks_plugin.BaseAuthPlugin | None) -> str:
    """Cinder's v3 URL for this call, without a trailing slash.

    :raises EndpointNotFound:
    """
    template = CONF.cinder.endpoint_template
    if template:
        values = context.to_dict()
        if not values.get('project_id'):
            values['project_id'] = auth.get_project_id(_session()) if auth is not None \
                else _noauth_identity(context)[1]
        return (template % values).rstrip('/')
    if auth is None:
        raise ks_exc.EndpointNotFound('[cinder] endpoint_template is not set, and there '
                                      'is no catalog (no [cinder] auth_type) to find '
                                      'the volume service in')
    service_type, service_name, interface = CONF.cinder.catalog_info.split(':', 2)
    url = _session().get_endpoint(auth, service_type=service_type,
                                  service_name=service_name or None, interface=interface,
                                  region_name=CONF.cinder.os_region_name)
    if not url:
        raise ks_exc.EndpointNotFound('no %s service in the catalog' % service_type)
    return url.rstrip('/')


def _root(endpoint: str) -> str:
    """The URL of Cinder's version document: ``endpoint`` without ``/v3[/project]``."""
    parts = urllib.parse.urlsplit(endpoint)
    path = parts.path
    for version in ('/v3', '/v2'):
        if path.endswith(version) or version + '/' in path:
            path = path[:path.rfind(version)]
            break
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, '', ''))


def _parse(version: str) -> tuple[int, int]:
    major, _, minor = version.partition('.')
    return int(major), int(minor or 0)


def _versions(root: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Cinder's lowest and highest v3 microversions, from its version document (asked
    once per ``root``; a failure is not remembered).

    :raises CinderAPIVersionNotAvailable: no v3 API there.
    """
    with _VERSIONS_LOCK:
        known = _VERSIONS.get(root)
    if known is not None:
        return known
    url = root.rstrip('/') + '/'
    resp = _session().request(url, 'GET', authenticated=False, raise_exc=False,
                              headers={'Accept': 'application/json'},
                              connect_retries=CONF.cinder.http_retries,
                              connect_retry_delay=RETRY_DELAY)
    try:
        documents = resp.json()['versions']
    except (ValueError, KeyError, TypeError) as exc:
        raise exception.VolumeError(status=resp.status_code, method='GET', path=url,
                                    detail='no version document') from exc
    for document in documents:
        if str(document.get('id', '')).startswith('v3') and document.get('version'):
            found = (_parse(document.get('min_version') or '3.0'),
                     _parse(document['version']))
            LOG.debug('Cinder at %s offers microversions %s to %s', root, *found)
            with _VERSIONS_LOCK:
                _VERSIONS[root] = found
            return found
    raise exception.CinderAPIVersionNotAvailable(version='%d.%d' % MIN_VERSION)


def microversion(endpoint: str, wanted: tuple[int, int] | None = None) -> tuple[int, int]:
    """The microversion calls to ``endpoint`` name: Cinder's highest, at most ours;
    ``wanted`` when given (a call that needs that version's behaviour).

    :raises CinderAPIVersionNotAvailable: Cinder's highest is below 3.44, or Cinder
        does not offer ``wanted``.
    """
    lowest, highest = _versions(_root(endpoint))
    if highest < MIN_VERSION:
        raise exception.CinderAPIVersionNotAvailable(version='%d.%d' % MIN_VERSION)
    if wanted is not None:
        if not lowest <= wanted <= highest:
            raise exception.CinderAPIVersionNotAvailable(version='%d.%d' % wanted)
        return wanted
    return min(highest, MAX_VERSION)


class Response:
    """Cinder's answer to a call that succeeded: its status and JSON body, and the
    microversion it was asked at."""

    def __init__(self, status: int, body: dict[str, Any], version: tuple[int, int]) -> None:
        self.status = status
        self.body = body
        self.version = version


def _detail(resp: requests.Response) -> tuple[str, str | None]:
    """Cinder's error message and fault name (``itemNotFound``, ``overLimit``...)."""
    try:
        body = resp.json()
        if isinstance(body, dict) and len(body) == 1:
            fault, value = next(iter(body.items()))
            if isinstance(value, dict) and value.get('message'):
                return str(value['message']), fault
    except ValueError:
        pass
    return ' '.join((resp.text or '').split())[:300] or resp.reason or '', None


def _error(resp: requests.Response, method: str, path: str,
           not_found: exception.NovaliteException | None,
           bad_request: type[exception.Invalid]) -> exception.NovaliteException:
    """The novalite exception of Cinder's error answer."""
    status = resp.status_code
    detail, fault = _detail(resp)
    if status == 413 or fault == 'overLimit' or \
            (400 <= status < 500 and 'quota' in detail.lower()):
        return exception.VolumeOverQuota(reason=detail)
    if status == 404:
        return not_found if not_found is not None else exception.NotFound(detail)
    if status == 400:
        # Cinder's message often starts as ours does ("Invalid volume: ..."): once is enough.
        prefix = bad_request.msg_fmt.split('%(')[0]
        return bad_request(reason=detail[len(prefix):] if prefix and
                           detail.startswith(prefix) else detail)
    return exception.VolumeError(status=status, method=method, path=path, detail=detail)


@contextlib.contextmanager
def _reaching(method: str, url: str) -> Iterator[None]:
    """Keystoneauth's failures to reach Cinder (or Keystone) as novalite's."""
    try:
        yield
    except _CONNECT_ERRORS as exc:
        raise exception.CinderConnectionFailed(
            server=CONF.cinder.endpoint_template or 'the volume service',
            reason=str(exc)) from exc
    except ks_exc.HttpError as exc:
        # Keystone refused the service user's credentials.
        raise exception.VolumeError(status=exc.http_status, method=method, path=url,
                                    detail='authentication failed: %s' % exc) from exc


def _target(context: RequestContext, wanted: tuple[int, int] | None = None
            ) -> tuple[ks_plugin.BaseAuthPlugin | None, str, tuple[int, int]]:
    auth = _auth(context)
    endpoint = _endpoint(context, auth)
    return auth, endpoint, microversion(endpoint, wanted)


def version(context: RequestContext) -> tuple[int, int]:
    """The microversion that calls on behalf of ``context`` name.

    :raises CinderConnectionFailed, CinderAPIVersionNotAvailable: as :func:`call`.
    """
    with _reaching('GET', '/'):
        return _target(context)[2]


def supports(context: RequestContext, wanted: tuple[int, int]) -> bool:
    """Whether the Cinder that calls on behalf of ``context`` go to offers the
    microversion ``wanted`` (Nova's ``is_microversion_supported``).

    :raises CinderConnectionFailed: as :func:`call`.
    """
    with _reaching('GET', '/'):
        endpoint = _endpoint(context, _auth(context))
        lowest, highest = _versions(_root(endpoint))
    return lowest <= wanted <= highest


def call(context: RequestContext, method: str, path: str, *,
         body: Mapping[str, Any] | None = None,
         query: Mapping[str, object] | None = None,
         not_found: exception.NovaliteException | None = None,
         bad_request: type[exception.Invalid] = exception.InvalidVolume,
         retry_statuses: Sequence[int] = (), status_retries: int = 0,
         microversion: tuple[int, int] | None = None) -> Response:
    """One call to Cinder on behalf of ``context``.

    :param path: below the v3 endpoint (``/volumes/<id>``)
    :param not_found: raised when Cinder answers 404 (default: ``NotFound``)
    :param bad_request: the ``Invalid`` raised, with Cinder's message, on a 400
    :param retry_statuses: statuses that keystoneauth tries again, ``status_retries``
        times, before the last answer counts
    :param microversion: the microversion this call needs (default: Cinder's highest,
        at most ``MAX_VERSION``)
    :raises CinderConnectionFailed: Cinder could not be reached (after the retries).
    :raises CinderAPIVersionNotAvailable: Cinder is older than 3.44 (or than
        ``microversion``).
    :raises VolumeOverQuota: 413, or Cinder's message names a quota.
    :raises VolumeError: any other error answer (status, method, path, message).
    :raises NoUserToken: see the module docstring.
    """
    url = path
    with _reaching(method, path):
        auth, endpoint, version = _target(context, microversion)
        url = endpoint + path
        if query:
            url += '?' + urllib.parse.urlencode(
                [(k, v) for k, values in query.items()
                 for v in (values if isinstance(values, (list, tuple)) else [values])])
        headers = {'Accept': 'application/json',
                   'OpenStack-API-Version': 'volume %d.%d' % version}
        if context.global_id:
            headers['X-OpenStack-Request-ID'] = context.global_id
        if auth is None:
            headers['X-Auth-Token'] = '%s:%s' % _noauth_identity(context)
            headers['X-Service-Roles'] = 'service'
        resp = _session().request(
            url, method, auth=auth, authenticated=auth is not None, raise_exc=False,
            headers=headers, json=body,
            connect_retries=CONF.cinder.http_retries, connect_retry_delay=RETRY_DELAY,
            status_code_retries=status_retries if retry_statuses else 0,
            retriable_status_codes=list(retry_statuses) or None,
            status_code_retry_delay=RETRY_DELAY)
    LOG.debug('Cinder: %s %s -> %s', method, url, resp.status_code)
    if resp.status_code >= 400:
        if resp.status_code >= 500:
            LOG.warning('Cinder: %s %s -> %s %s', method, url, resp.status_code,
                        _detail(resp)[0])
        raise _error(resp, method, path, not_found, bad_request)
    data = resp.json() if resp.content else {}
    return Response(resp.status_code, data if isinstance(data, dict) else {}, version)
