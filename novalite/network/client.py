"""The Neutron v2.0 REST client: keystoneauth1 requests on behalf of a user or as admin.

Built from the ``[neutron]`` keystoneauth options, as Nova's. Two ways to reach Neutron:

- with Keystone (``auth_type`` set, e.g. ``password`` for the service user): admin calls
  (port binding, updates of ports the user cannot change) authenticate as the service
  user; user calls carry the caller's own token (``context.auth_token``, which the API's
  keystonemiddleware pipeline puts in the request context) to the endpoint the service
  user finds in the catalog, so Neutron shows the user only what the user may see. A
  user call whose context has no token, as Nova's: an admin context (service work,
  ``elevated()``) is served by the service user; any other is refused
  (``NoUserToken``), since the service user would show it every project's resources;
- keystone-less (no ``auth_type``, ``endpoint_override`` naming Neutron, which runs with
  ``auth_strategy = noauth``): every call goes unauthenticated and Neutron treats it as
  admin. No project header is sent (Neutron's noauth refuses one); a port is given its
  owner in its body instead. The service's own calls (``admin``) carry the ``service``
  role (``X-Roles``, which noauth takes as given), as the service user has it with
  Keystone: Neutron lets only that role make, activate and delete port bindings.

Connection failures (refused, reset, timed out) are retried ``[neutron] http_retries``
times by keystoneauth, then raised as ``NeutronConnectionFailed``.
"""
from __future__ import annotations

import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Protocol

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF

if TYPE_CHECKING:
    import requests

LOG = logging.getLogger(__name__)

_CONNECT_ERRORS = (ks_exc.ConnectionError, ks_exc.RequestTimeout, ks_exc.EndpointNotFound,
                   ks_exc.DiscoveryFailure)


class Context(Protocol):
    """What the client reads of a request context."""

    auth_token: str | None
    project_id: str | None
    is_admin: bool | None

    def can(self, action: str, target: dict | None = None, fatal: bool = True) -> bool: ...


class NeutronError(exception.NovaliteException):
    """Neutron answered with an error the caller did not expect."""

    msg_fmt = 'Neutron answered %(status)s to %(method)s %(path)s: %(detail)s'

    def __init__(self, status: int, method: str, path: str, detail: str,
                 neutron_type: str | None = None) -> None:
        super().__init__(status=status, method=method, path=path, detail=detail)
        self.status = status
        self.detail = detail
        self.neutron_type = neutron_type


class NeutronNotFound(NeutronError):
    code = 404


class NeutronConflict(NeutronError):
    code = 409


class NoUserToken(exception.NotAuthorized):
    """A user call to a Keystone-authenticated Neutron from a context with no token."""

    msg_fmt = 'No token of the caller (project %(project_id)s) to call Neutron with.'
    code = 401


_BY_STATUS: dict[int, type[NeutronError]] = {404: NeutronNotFound, 409: NeutronConflict}

_ADAPTER: ks_adapter.Adapter | None = None
_LOCK = threading.Lock()


def configured() -> bool:
    """Whether a Neutron endpoint is configured at all."""
    group = CONF.neutron
    return bool(group.enabled and (group.endpoint_override or group.auth_type))


def _adapter() -> ks_adapter.Adapter:
    global _ADAPTER
    if _ADAPTER is None:
        with _LOCK:
            if _ADAPTER is None:
                auth = ks_loading.load_auth_from_conf_options(CONF, 'neutron') \
                    if CONF.neutron.auth_type else None
                session = ks_loading.load_session_from_conf_options(CONF, 'neutron',
                                                                    auth=auth)
                adapter = ks_loading.load_adapter_from_conf_options(
                    CONF, 'neutron', session=session, auth=auth)
                adapter.connect_retries = CONF.neutron.http_retries
                adapter.additional_headers = {'Accept': 'application/json'}
                _ADAPTER = adapter
    return _ADAPTER


def reset() -> None:
    """Forget the cached adapter (after the options changed, in tests)."""
    global _ADAPTER
    _ADAPTER = None


def _detail(resp: requests.Response) -> tuple[str, str | None]:
    try:
        error = resp.json().get('NeutronError') or {}
        return error.get('message') or resp.text[:300], error.get('type')
    except (ValueError, AttributeError):
        return ' '.join((resp.text or '').split())[:300], None


def _binding_path(port_id: str, host: str) -> str:
    return '/ports/%s/bindings/%s' % (port_id, urllib.parse.quote(host, safe=''))


class Client:
    """One caller's view of Neutron: ``admin`` calls as the service, else as the user."""

    def __init__(self, context: Context | None, admin: bool = False) -> None:
        """:param context: the caller; ``None``: the service (as ``admin``)
        :param admin: call as the service whoever the caller is
        :raises NoUserToken: with Keystone, a user call from a context that is not
            admin and has no token (see the module docstring)
        """
        self._token = None if admin or context is None else context.auth_token
        self._admin = admin or context is None
        if CONF.neutron.auth_type and not (self._admin or self._token):
            assert context is not None
            if not context.is_admin:
                raise NoUserToken(project_id=context.project_id)
            self._admin = True

    def _request(self, method: str, path: str, body: dict | None = None,
                 params: dict[str, object] | None = None) -> dict[str, Any]:
        adapter = _adapter()
        url = '/v2.0' + path
        if params:
            url += '?' + urllib.parse.urlencode(
                [(k, v) for k, values in params.items()
                 for v in (values if isinstance(values, (list, tuple)) else [values])])
        kwargs: dict[str, Any] = {'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        if CONF.neutron.auth_type and not self._admin:
            # The user's own token, to the endpoint the service user found.
            kwargs.update(endpoint_override=adapter.get_endpoint(), authenticated=False,
                          headers={'X-Auth-Token': self._token})
        elif not CONF.neutron.auth_type and self._admin:
            kwargs['headers'] = {'X-Roles': 'service'}
        try:
            resp = adapter.request(url, method, **kwargs)
        except _CONNECT_ERRORS as exc:
            raise exception.NeutronConnectionFailed(
                server=CONF.neutron.endpoint_override or 'the network service',
                reason=str(exc)) from exc
        if resp.status_code >= 400:
            detail, neutron_type = _detail(resp)
            if resp.status_code >= 500:
                LOG.warning('Neutron: %s %s -> %s %s', method, path, resp.status_code, detail)
            cls = _BY_STATUS.get(resp.status_code, NeutronError)
            raise cls(resp.status_code, method, path, detail, neutron_type)
        if resp.status_code == 204 or not resp.content:
            return {}
        return resp.json()

    def get(self, path: str, **params: object) -> dict[str, Any]:
        return self._request('GET', path, params=params)

    def post(self, path: str, body: dict) -> dict[str, Any]:
        return self._request('POST', path, body=body)

    def put(self, path: str, body: dict) -> dict[str, Any]:
        return self._request('PUT', path, body=body)

    def delete(self, path: str) -> None:
        self._request('DELETE', path)

    def put_action(self, path: str) -> dict[str, Any]:
        """A PUT with no body: an action on a resource (a binding's ``activate``)."""
        return self._request('PUT', path)

    # -- the nouns the compute side uses ------------------------------------------------

    def list_networks(self, **filters: object) -> list[dict[str, Any]]:
        return self.get('/networks', **filters)['networks']

    def show_network(self, network_id: str) -> dict[str, Any]:
        return self.get('/networks/%s' % network_id)['network']

    def list_subnets(self, **filters: object) -> list[dict[str, Any]]:
        return self.get('/subnets', **filters)['subnets']

    def list_ports(self, **filters: object) -> list[dict[str, Any]]:
        return self.get('/ports', **filters)['ports']

    def show_port(self, port_id: str) -> dict[str, Any]:
        return self.get('/ports/%s' % port_id)['port']

    def create_port(self, port: dict[str, Any]) -> dict[str, Any]:
        return self.post('/ports', {'port': port})['port']

    def update_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any]:
        return self.put('/ports/%s' % port_id, {'port': port})['port']

    def delete_port(self, port_id: str) -> None:
        self.delete('/ports/%s' % port_id)

    def list_extensions(self) -> list[dict[str, Any]]:
        return self.get('/extensions')['extensions']

    # The port bindings of the ``binding-extended`` extension: one per host, one of
    # them active (the port's ``binding:*`` attributes), the others inactive.

    def list_port_bindings(self, port_id: str, **filters: object) -> list[dict[str, Any]]:
        return self.get('/ports/%s/bindings' % port_id, **filters)['bindings']

    def show_port_binding(self, port_id: str, host: str) -> dict[str, Any]:
        return self.get(_binding_path(port_id, host))['binding']

    def create_port_binding(self, port_id: str, binding: dict[str, Any]) -> dict[str, Any]:
        return self.post('/ports/%s/bindings' % port_id, {'binding': binding})['binding']

    def activate_port_binding(self, port_id: str, host: str) -> dict[str, Any]:
        """Make the binding on ``host`` the active one (the active one before goes
        inactive); Neutron answers with the binding itself, unwrapped."""
        return self.put_action(_binding_path(port_id, host) + '/activate')

    def delete_port_binding(self, port_id: str, host: str) -> None:
        self.delete(_binding_path(port_id, host))

    def list_floatingips(self, **filters: object) -> list[dict[str, Any]]:
        return self.get('/floatingips', **filters)['floatingips']

    def list_security_groups(self, **filters: object) -> list[dict[str, Any]]:
        return self.get('/security-groups', **filters)['security_groups']

    def show_quota(self, project_id: str) -> dict[str, Any]:
        return self.get('/quotas/%s' % project_id)['quota']
