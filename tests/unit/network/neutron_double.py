"""A Neutron test double: the v2.0 REST API in memory, behind keystoneauth's adapter.

``NeutronDouble`` stands where ``novalite.network.client`` keeps its keystoneauth
adapter, so the real ``Client`` (query strings, error mapping) talks to it. It keeps
networks, subnets, ports, security groups and their rules, and floating IPs; filters
lists by any attribute (several values: any of them) and by ``fields``; and answers the
errors Neutron answers for what these tests do (404, duplicate security groups on a port
400, port security off 400, a group in use 409, an exhausted pool 409). ``requests``
records every call as ``(method, path, query)``.

``GET /extensions`` lists ``extensions`` (aliases). A port's bindings
(``/ports/{id}/bindings``, the ``binding-extended`` extension) answer as ML2 does: the
port's ``binding:*`` attributes are its active binding; a new one is inactive (201; 409
if the host has one, 400 for a port that is not a server's); ``activate`` swaps the
active one (409 if active already, 404 if none there; the body is the binding itself,
unwrapped), the old one staying inactive and unbound; a delete answers 204 (404 if
none).
"""
from __future__ import annotations

import contextlib
import itertools
import json
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

from novalite.conf import CONF
from novalite.network import client

URL = 'http://neutron.test:9696'
_COLLECTIONS = {'networks': 'network', 'subnets': 'subnet', 'ports': 'port',
                'security-groups': 'security_group',
                'security-group-rules': 'security_group_rule', 'floatingips': 'floatingip'}


class Response:
    def __init__(self, status: int, body: dict | None) -> None:
        self.status_code = status
        self.text = json.dumps(body) if body is not None else ''
        self.content = self.text.encode()

    def json(self) -> Any:
        return json.loads(self.text)


class NeutronError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _matches(item: dict[str, Any], query: dict[str, list[str]]) -> bool:
    for key, values in query.items():
        if key == 'fields':
            continue
        value = item.get(key)
        if str(value) not in values and not (isinstance(value, bool)
                                             and str(value).lower() in values):
            return False
    return True


class NeutronDouble:
    """The adapter ``Client`` uses, answering from memory."""

    def __init__(self) -> None:
        self.store: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in _COLLECTIONS}
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.exhausted = False
        self.extensions = ['binding', 'binding-extended', 'external-net', 'router',
                           'security-group']
        # Port id -> host -> that port's inactive binding there.
        self.bindings: dict[str, dict[str, dict[str, Any]]] = {}
        self._addresses = (f'172.24.4.{n}' for n in itertools.count(10))

    # -- keystoneauth's Adapter ---------------------------------------------------------

    def get_endpoint(self) -> str:
        return URL

    def request(self, url: str, method: str, raise_exc: bool = True,
                json: dict | None = None, **kwargs: Any) -> Response:
        parsed = urllib.parse.urlsplit(url)
        path = parsed.path.removeprefix('/v2.0')
        query = urllib.parse.parse_qs(parsed.query)
        self.requests.append((method, path, query))
        parts = path.strip('/').split('/')
        try:
            if parts == ['extensions'] and method == 'GET':
                return Response(200, {'extensions': [
                    {'alias': a, 'name': a, 'description': ''} for a in self.extensions]})
            if parts[0] == 'ports' and parts[2:3] == ['bindings']:
                return self._binding(method, parts[1], parts[3:], json)
            return self._dispatch(method, parts[0], parts[1] if len(parts) > 1 else None,
                                  query, json)
        except NeutronError as exc:
            return Response(exc.status, {'NeutronError': {'type': exc.kind,
                                                          'message': exc.message,
                                                          'detail': ''}})

    # -- what tests set up --------------------------------------------------------------

    def add(self, collection: str, **values: Any) -> dict[str, Any]:
        return self._create(collection, values)

    def calls(self, method: str = 'GET', collection: str | None = None) -> list[tuple]:
        return [r for r in self.requests if r[0] == method and
                (collection is None or r[1].strip('/').split('/')[0] == collection)]

    # -- the API ------------------------------------------------------------------------

    def _dispatch(self, method: str, collection: str, item_id: str | None,
                  query: dict[str, list[str]], body: dict | None) -> Response:
        if collection not in self.store:
            raise NeutronError(404, 'HTTPNotFound', 'The resource could not be found.')
        singular = _COLLECTIONS[collection]
        if item_id is None and method == 'GET':
            fields = query.get('fields')
            items = [self._shown(i, fields) for i in self.store[collection].values()
                     if _matches(i, query)]
            return Response(200, {collection.replace('-', '_'): items})
        if item_id is None and method == 'POST':
            assert body is not None
            return Response(201, {singular: self._shown(
                self._create(collection, dict(body[singular])))})
        item = self.store[collection].get(item_id or '')
        if item is None:
            raise NeutronError(404, '%sNotFound' % singular.title().replace('_', ''),
                               '%s %s could not be found.' % (singular, item_id))
        if method == 'GET':
            return Response(200, {singular: self._shown(item)})
        if method == 'PUT':
            assert body is not None
            return Response(200, {singular: self._shown(
                self._update(collection, item, body[singular]))})
        self._delete(collection, item)
        return Response(204, None)

    # -- port bindings (binding-extended) -------------------------------------------------

    @staticmethod
    def _active(port: dict[str, Any]) -> dict[str, Any]:
        host = port.get('binding:host_id') or ''
        return {'host': host,
                'vif_type': port.get('binding:vif_type') or ('ovs' if host else 'unbound'),
                'vif_details': dict(port.get('binding:vif_details') or {}),
                'vnic_type': port.get('binding:vnic_type') or 'normal',
                'profile': dict(port.get('binding:profile') or {}), 'status': 'ACTIVE'}

    def _binding(self, method: str, port_id: str, rest: list[str],
                 body: dict | None) -> Response:
        port = self.store['ports'].get(port_id)
        if port is None:
            raise NeutronError(404, 'PortNotFound', 'Port %s could not be found.' % port_id)
        if not str(port.get('device_owner') or '').startswith('compute:'):
            raise NeutronError(400, 'HTTPBadRequest', 'Invalid port %s. Operation only '
                               'valid on compute and shared filesystem ports' % port_id)
        inactive = self.bindings.setdefault(port_id, {})
        active = self._active(port)
        if not rest and method == 'GET':
            return Response(200, {'bindings': [active, *inactive.values()]})
        if not rest and method == 'POST':
            assert body is not None
            wanted = body['binding']
            host = wanted['host']
            if host in (active['host'], *inactive):
                raise NeutronError(409, 'PortBindingAlreadyExists', 'Binding for port %s '
                                   'on host %s already exists.' % (port_id, host))
            inactive[host] = {'host': host, 'vif_type': 'ovs', 'vif_details': {
                'port_filter': True, 'connectivity': 'l2', 'bridge_name': 'br-int',
                'datapath_type': 'system'}, 'vnic_type': wanted.get('vnic_type') or 'normal',
                'profile': wanted.get('profile') or {}, 'status': 'INACTIVE'}
            return Response(201, {'binding': inactive[host]})
        host = urllib.parse.unquote(rest[0])
        if not host or (host != active['host'] and host not in inactive):
            raise NeutronError(404, 'PortBindingNotFound', 'Binding for port %s for host '
                               '%s could not be found.' % (port_id, host))
        if method == 'GET':
            return Response(200, {'binding': active if host == active['host']
                                  else inactive[host]})
        if method == 'PUT' and rest[1:] == ['activate']:
            if host == active['host']:
                raise NeutronError(409, 'PortBindingAlreadyActive', 'Binding for port %s '
                                   'on host %s is already active.' % (port_id, host))
            new = inactive.pop(host)
            if active['host']:
                inactive[active['host']] = dict(active, vif_type='unbound', vif_details={},
                                                status='INACTIVE')
            port.update({'binding:host_id': host, 'binding:vif_type': new['vif_type'],
                         'binding:vif_details': new['vif_details'],
                         'binding:vnic_type': new['vnic_type'],
                         'binding:profile': new['profile'], 'status': 'DOWN'})
            return Response(200, self._active(port))
        if method == 'DELETE':
            if inactive.pop(host, None) is None:
                port.update({'binding:host_id': None, 'binding:vif_type': 'unbound',
                             'binding:vif_details': {}})
            return Response(204, None)
        raise NeutronError(404, 'HTTPNotFound', 'The resource could not be found.')

    def _shown(self, item: dict[str, Any], fields: list[str] | None = None) -> dict:
        shown = dict(item)
        if 'security_group_rules' in shown:
            shown['security_group_rules'] = [
                dict(r) for r in self.store['security-group-rules'].values()
                if r['security_group_id'] == item['id']]
        if 'floating_network_id' in shown:
            port = self.store['ports'].get(item.get('port_id') or '')
            shown['port_details'] = {'device_id': port['device_id'], 'name': ''} \
                if port else None
        return {k: v for k, v in shown.items() if k in fields} if fields else shown

    def _create(self, collection: str, values: dict[str, Any]) -> dict[str, Any]:
        item: dict[str, Any] = {'id': str(uuid.uuid4()), 'project_id': '', 'name': ''}
        if collection == 'security-groups':
            item.update(description='', security_group_rules=[])
        elif collection == 'ports':
            item.update(device_id='', fixed_ips=[], port_security_enabled=True,
                        security_groups=[], mac_address='fa:16:3e:00:00:01')
        elif collection == 'networks':
            item.update({'router:external': False, 'shared': False, 'subnets': []})
        elif collection == 'floatingips':
            item.update(self._new_floating_ip(values))
        item.update(values)
        item.setdefault('tenant_id', item['project_id'])
        self.store[collection][item['id']] = item
        if collection == 'security-groups':
            for ethertype in ('IPv4', 'IPv6'):
                self._create('security-group-rules', {
                    'security_group_id': item['id'], 'direction': 'egress',
                    'ethertype': ethertype, 'protocol': None, 'port_range_min': None,
                    'port_range_max': None, 'remote_ip_prefix': None,
                    'remote_group_id': None, 'project_id': item['project_id']})
        return item

    def _new_floating_ip(self, values: dict[str, Any]) -> dict[str, Any]:
        network = self.store['networks'].get(values.get('floating_network_id', ''))
        if network is None or not network.get('router:external'):
            raise NeutronError(404, 'ExternalGatewayForFloatingIPNotFound',
                               'External network not found.')
        if self.exhausted:
            raise NeutronError(409, 'IpAddressGenerationFailure',
                               'No more IP addresses available on network.')
        return {'floating_ip_address': next(self._addresses), 'port_id': None,
                'fixed_ip_address': None, 'status': 'DOWN'}

    def _update(self, collection: str, item: dict[str, Any],
                values: dict[str, Any]) -> dict[str, Any]:
        groups = values.get('security_groups')
        if collection == 'ports' and groups is not None:
            if len(set(groups)) != len(groups):
                raise NeutronError(400, 'HTTPBadRequest',
                                   'Invalid input for security_groups. Reason: Duplicate '
                                   'items in the list.')
            if groups and not item.get('port_security_enabled', True):
                raise NeutronError(400, 'PortSecurityAndIPRequiredForSecurityGroups',
                                   'Port security must be enabled and port must have an '
                                   'IP address in order to use security groups.')
        item.update(values)
        return item

    def _delete(self, collection: str, item: dict[str, Any]) -> None:
        if collection == 'security-groups' and any(
                item['id'] in p.get('security_groups', [])
                for p in self.store['ports'].values()):
            raise NeutronError(409, 'SecurityGroupInUse',
                               'Security Group %s in use.' % item['id'])
        del self.store[collection][item['id']]


@contextlib.contextmanager
def installed() -> Iterator[NeutronDouble]:
    """A double standing in for the Neutron of ``[neutron] endpoint_override`` (a test
    module's ``neutron`` fixture yields it)."""
    double = NeutronDouble()
    CONF.set_override('endpoint_override', URL, group='neutron')
    client._ADAPTER = double  # type: ignore[assignment]
    try:
        yield double
    finally:
        client.reset()
        CONF.clear_override('endpoint_override', group='neutron')
