"""A test double of ``novalite.network.client.Client``: Neutron's networks, subnets and
ports kept in memory, with the answers and errors the real Neutron gives.

Only what the compute and API code calls is there. A port gets a MAC and, per fixed IP
asked by subnet (or none asked), the next free address of the subnet; binding it to a
host (``binding:host_id``) makes it an ``ovs`` VIF, clearing the host ``unbound``.
``fail`` maps a method name to an exception that method raises (once per entry in the
list), as a Neutron that goes away would.

Port bindings (``binding-extended``), as ML2 answers them: the port's ``binding:*``
attributes are its active binding; ``create_port_binding`` adds an inactive one for
another host (409 if the host has one, 500 if it cannot be bound: a host of
``unbindable``, 400 for a port that is not a server's); ``activate_port_binding`` swaps
the active one (409 if active already, 404 if none there), the old one staying inactive
and unbound; ``delete_port_binding`` deletes one (404 if none).
"""
from __future__ import annotations

import copy
import ipaddress
import itertools
import uuid
from typing import Any

from novalite.network import client as neutron_client

_VIF_DETAILS = {'port_filter': True, 'connectivity': 'l2', 'ovs_create_tap': True,
                'bridge_name': 'br-int', 'datapath_type': 'netdev'}


def _matches(item: dict[str, Any], filters: dict[str, Any]) -> bool:
    for key, wanted in filters.items():
        if key == 'fields':
            continue
        if key == 'fixed_ips':
            address = str(wanted).split('=', 1)[1]
            if not any(f['ip_address'] == address for f in item.get('fixed_ips', [])):
                return False
            continue
        values = wanted if isinstance(wanted, (list, tuple)) else [wanted]
        if item.get(key) not in values:
            return False
    return True


class NeutronClientDouble:
    """In-memory Neutron for one test; every call is recorded in ``calls``."""

    def __init__(self) -> None:
        self.networks: dict[str, dict[str, Any]] = {}
        self.subnets: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []
        self.fail: dict[str, list[Exception]] = {}
        self.port_quota = -1
        self.extensions = ['binding', 'binding-extended', 'external-net', 'router',
                           'security-group']
        # Port id -> host -> that port's inactive binding there.
        self.bindings: dict[str, dict[str, dict[str, Any]]] = {}
        self.unbindable: set[str] = set()
        self._macs = itertools.count(1)

    # -- set-up helpers ---------------------------------------------------------------

    def add_network(self, name: str = 'private', cidr: str | None = '10.0.0.0/24',
                    project_id: str = 'p1', **extra: Any) -> dict[str, Any]:
        """A network (with one subnet on ``cidr`` unless None); returns the network."""
        network = {'id': str(uuid.uuid4()), 'name': name, 'project_id': project_id,
                   'subnets': [], 'shared': False, 'router:external': False,
                   'mtu': 1442, 'provider:network_type': 'geneve', 'status': 'ACTIVE',
                   **extra}
        self.networks[network['id']] = network
        if cidr:
            self.add_subnet(network, cidr)
        return network

    def add_subnet(self, network: dict[str, Any], cidr: str) -> dict[str, Any]:
        net = ipaddress.ip_network(cidr)
        subnet = {'id': str(uuid.uuid4()), 'network_id': network['id'], 'cidr': cidr,
                  'ip_version': net.version, 'gateway_ip': str(net.network_address + 1),
                  'dns_nameservers': []}
        self.subnets[subnet['id']] = subnet
        network['subnets'].append(subnet['id'])
        return subnet

    def add_port(self, network: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """A port the user made (not bound, no device)."""
        return self.create_port({'network_id': network['id'], **extra}, record=False)

    # -- the client's methods ---------------------------------------------------------

    def _call(self, name: str, arg: Any) -> None:
        self.calls.append((name, arg))
        errors = self.fail.get(name)
        if errors:
            raise errors.pop(0)

    @staticmethod
    def _not_found(kind: str, ident: str) -> neutron_client.NeutronNotFound:
        return neutron_client.NeutronNotFound(404, 'GET', '/%ss/%s' % (kind, ident),
                                              '%s %s could not be found.' % (kind, ident))

    def list_networks(self, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_networks', filters)
        return [copy.deepcopy(n) for n in self.networks.values() if _matches(n, filters)]

    def show_network(self, network_id: str) -> dict[str, Any]:
        self._call('show_network', network_id)
        if network_id not in self.networks:
            raise self._not_found('Network', network_id)
        return copy.deepcopy(self.networks[network_id])

    def list_subnets(self, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_subnets', filters)
        return [copy.deepcopy(s) for s in self.subnets.values() if _matches(s, filters)]

    def list_ports(self, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_ports', filters)
        return [copy.deepcopy(p) for p in self.ports.values() if _matches(p, filters)]

    def show_port(self, port_id: str) -> dict[str, Any]:
        self._call('show_port', port_id)
        if port_id not in self.ports:
            raise self._not_found('Port', port_id)
        return copy.deepcopy(self.ports[port_id])

    def _address(self, subnet_id: str, wanted: str | None = None) -> str:
        subnet = self.subnets[subnet_id]
        used = {f['ip_address'] for p in self.ports.values() for f in p['fixed_ips']}
        if wanted:
            if wanted in used:
                raise neutron_client.NeutronConflict(
                    409, 'PUT', '/ports', 'IP address %s already allocated' % wanted,
                    'IpAddressAlreadyAllocated')
            return wanted
        for host in itertools.islice(ipaddress.ip_network(subnet['cidr']).hosts(), 1, None):
            if str(host) not in used:
                return str(host)
        raise neutron_client.NeutronConflict(
            409, 'PUT', '/ports', 'No more IP addresses available on network %s.'
            % subnet['network_id'], 'IpAddressGenerationFailure')

    def _fixed_ips(self, network_id: str, asked: list[dict[str, Any]] | None,
                   kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if asked is None:
            subnet_ids = self.networks[network_id]['subnets'][:1]
            return [{'subnet_id': s, 'ip_address': self._address(s)} for s in subnet_ids]
        result = []
        for fixed in asked:
            if fixed.get('ip_address') and any(
                    k['ip_address'] == fixed['ip_address'] for k in kept):
                result.append(dict(fixed, subnet_id=next(
                    k['subnet_id'] for k in kept if k['ip_address'] == fixed['ip_address'])))
                continue
            subnet_id = fixed.get('subnet_id') or next(
                s['id'] for s in self.subnets.values() if s['network_id'] == network_id
                and ipaddress.ip_address(fixed['ip_address']) in
                ipaddress.ip_network(s['cidr']))
            result.append({'subnet_id': subnet_id,
                           'ip_address': self._address(subnet_id, fixed.get('ip_address'))})
        return result

    @staticmethod
    def _bind(port: dict[str, Any]) -> None:
        bound = bool(port.get('binding:host_id'))
        port['binding:vif_type'] = 'ovs' if bound else 'unbound'
        port['binding:vif_details'] = dict(_VIF_DETAILS) if bound else {}

    def create_port(self, port: dict[str, Any], record: bool = True) -> dict[str, Any]:
        if record:
            self._call('create_port', port)
        if port['network_id'] not in self.networks:
            raise self._not_found('Network', port['network_id'])
        body = {k: v for k, v in port.items() if k != 'fixed_ips'}
        created = {'id': str(uuid.uuid4()), 'mac_address': 'fa:16:3e:00:00:%02x'
                   % next(self._macs), 'status': 'DOWN', 'device_id': '',
                   'device_owner': '', 'binding:host_id': None, 'binding:profile': {},
                   'binding:vnic_type': 'normal', 'project_id': 'p1', **body}
        created['fixed_ips'] = self._fixed_ips(port['network_id'], port.get('fixed_ips'), [])
        self._bind(created)
        self.ports[created['id']] = created
        return copy.deepcopy(created)

    def update_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any]:
        self._call('update_port', (port_id, port))
        if port_id not in self.ports:
            raise self._not_found('Port', port_id)
        current = self.ports[port_id]
        changes = dict(port)
        if 'fixed_ips' in changes:
            changes['fixed_ips'] = self._fixed_ips(current['network_id'],
                                                   changes['fixed_ips'], current['fixed_ips'])
        current.update(changes)
        self._bind(current)
        return copy.deepcopy(current)

    def delete_port(self, port_id: str) -> None:
        self._call('delete_port', port_id)
        if self.ports.pop(port_id, None) is None:
            raise self._not_found('Port', port_id)

    def list_floatingips(self, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_floatingips', filters)
        return []

    def list_security_groups(self, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_security_groups', filters)
        return [{'id': 'sg-default', 'name': 'default', 'project_id': 'p1'}]

    def show_quota(self, project_id: str) -> dict[str, Any]:
        self._call('show_quota', project_id)
        return {'port': self.port_quota}

    def list_extensions(self) -> list[dict[str, Any]]:
        self._call('list_extensions', None)
        return [{'alias': alias, 'name': alias, 'description': ''}
                for alias in self.extensions]

    # -- port bindings (binding-extended) -------------------------------------------------

    def _compute_port(self, method: str, port_id: str) -> dict[str, Any]:
        if port_id not in self.ports:
            raise self._not_found('Port', port_id)
        port = self.ports[port_id]
        if not port['device_owner'].startswith('compute:'):
            raise neutron_client.NeutronError(
                400, method, '/ports/%s/bindings' % port_id,
                'Invalid port %s. Operation only valid on compute and shared filesystem '
                'ports' % port_id, 'HTTPBadRequest')
        return port

    @staticmethod
    def _active(port: dict[str, Any]) -> dict[str, Any]:
        return {'host': port.get('binding:host_id') or '',
                'vif_type': port['binding:vif_type'],
                'vif_details': dict(port['binding:vif_details']),
                'vnic_type': port.get('binding:vnic_type', 'normal'),
                'profile': dict(port.get('binding:profile') or {}), 'status': 'ACTIVE'}

    @staticmethod
    def _binding_not_found(method: str, port_id: str, host: str
                           ) -> neutron_client.NeutronNotFound:
        return neutron_client.NeutronNotFound(
            404, method, '/ports/%s/bindings/%s' % (port_id, host),
            'Binding for port %s for host %s could not be found.' % (port_id, host),
            'PortBindingNotFound')

    def list_port_bindings(self, port_id: str, **filters: Any) -> list[dict[str, Any]]:
        self._call('list_port_bindings', (port_id, filters))
        port = self._compute_port('GET', port_id)
        every = [self._active(port), *self.bindings.get(port_id, {}).values()]
        return [copy.deepcopy(b) for b in every if _matches(b, filters)]

    def show_port_binding(self, port_id: str, host: str) -> dict[str, Any]:
        self._call('show_port_binding', (port_id, host))
        port = self._compute_port('GET', port_id)
        if host and host == port.get('binding:host_id'):
            return self._active(port)
        if host not in self.bindings.get(port_id, {}):
            raise self._binding_not_found('GET', port_id, host)
        return copy.deepcopy(self.bindings[port_id][host])

    def create_port_binding(self, port_id: str, binding: dict[str, Any]) -> dict[str, Any]:
        self._call('create_port_binding', (port_id, binding))
        port = self._compute_port('POST', port_id)
        host = binding['host']
        path = '/ports/%s/bindings' % port_id
        if host == port.get('binding:host_id') or host in self.bindings.get(port_id, {}):
            raise neutron_client.NeutronConflict(
                409, 'POST', path, 'Binding for port %s on host %s already exists.'
                % (port_id, host), 'PortBindingAlreadyExists')
        if host in self.unbindable:
            raise neutron_client.NeutronError(
                500, 'POST', path, 'Binding for port %s on host %s could not be created '
                'or updated.' % (port_id, host), 'PortBindingError')
        made = {'host': host, 'vif_type': 'ovs', 'vif_details': dict(_VIF_DETAILS),
                'vnic_type': binding.get('vnic_type') or 'normal',
                'profile': dict(binding.get('profile') or {}), 'status': 'INACTIVE'}
        self.bindings.setdefault(port_id, {})[host] = made
        return copy.deepcopy(made)

    def activate_port_binding(self, port_id: str, host: str) -> dict[str, Any]:
        self._call('activate_port_binding', (port_id, host))
        port = self._compute_port('PUT', port_id)
        if host == port.get('binding:host_id'):
            raise neutron_client.NeutronConflict(
                409, 'PUT', '/ports/%s/bindings/%s/activate' % (port_id, host),
                'Binding for port %s on host %s is already active.' % (port_id, host),
                'PortBindingAlreadyActive')
        inactive = self.bindings.get(port_id, {}).pop(host, None)
        if inactive is None:
            raise self._binding_not_found('PUT', port_id, host)
        old = self._active(port)
        if old['host']:
            self.bindings[port_id][old['host']] = dict(
                old, vif_type='unbound', vif_details={}, status='INACTIVE')
        port.update({'binding:host_id': host, 'binding:vif_type': inactive['vif_type'],
                     'binding:vif_details': inactive['vif_details'],
                     'binding:vnic_type': inactive['vnic_type'],
                     'binding:profile': inactive['profile'], 'status': 'DOWN'})
        return self._active(port)

    def delete_port_binding(self, port_id: str, host: str) -> None:
        self._call('delete_port_binding', (port_id, host))
        port = self._compute_port('DELETE', port_id)
        if self.bindings.get(port_id, {}).pop(host, None) is not None:
            return
        if not host or host != port.get('binding:host_id'):
            raise self._binding_not_found('DELETE', port_id, host)
        port['binding:host_id'] = None
        self._bind(port)
