"""The compute host's side of Neutron: a server's ports made, bound, moved and released.

What Nova's ``nova/network/neutron.py`` does for a libvirt host, in the same order:
a port is created (or the user's port taken) already bound to this host in one admin
call (``binding:host_id``, ``device_id`` = the server, ``device_owner`` =
``compute:<zone>``); the ports' networks and subnets are read once to build the
network info (``novalite.network.model``); a port whose binding failed fails the build
here, so it goes to another host. On release, ports novalite created are deleted and
ports the user passed in are unbound and kept (``preserve_on_delete``).
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Protocol

import cachetools
from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF
from novalite.network import client as neutron_client
from novalite.network import model
from novalite.network.requests import NetworkRequest

LOG = logging.getLogger(__name__)

# Who asks (the port work itself runs as Neutron's admin, whoever asks).
Ctx = neutron_client.Context | None

# Neutron's extension that binds a port to several hosts at once (a live migration's).
BINDING_EXTENDED = 'binding-extended'
# Seconds the list of Neutron's extensions is trusted (Nova's default
# ``[neutron] extension_sync_interval``).
EXTENSION_TTL = 600.0

# Unbinding a port the user keeps clears what made it this server's. (Its
# binding:profile is left alone: Neutron lets only its service role write it.)
_UNBIND = {'device_id': '', 'device_owner': '', 'binding:host_id': None}


class InstanceLike(Protocol):
    """What the port work reads of an instance."""

    uuid: str
    project_id: str | None
    availability_zone: str | None
    host: str | None


def _subnet(subnet: dict[str, Any], ips: list[model.IP]) -> model.Subnet:
    version = subnet.get('ip_version', 4)
    gateway = subnet.get('gateway_ip')
    return model.Subnet(
        cidr=subnet['cidr'], version=version, ips=ips, routes=[],
        gateway=model.IP(address=gateway, type='gateway', version=version)
        if gateway else None,
        dns=[model.IP(address=a, type='dns', version=version)
             for a in subnet.get('dns_nameservers', [])])


def build_vif(port: dict[str, Any], network: dict[str, Any], subnets: dict[str, dict],
              floating: dict[str, list[dict[str, Any]]], preserve: bool,
              tag: str | None = None,
              groups: dict[str, dict[str, Any]] | None = None) -> model.VIF:
    """One VIF of the network info, from Neutron's port, network, subnets, floating IPs
    and security groups (by id)."""
    details = port.get('binding:vif_details') or {}
    by_subnet: dict[str, list[model.IP]] = {}
    for fixed in port.get('fixed_ips', []):
        subnet = subnets.get(fixed['subnet_id'], {})
        by_subnet.setdefault(fixed['subnet_id'], []).append(model.IP(
            address=fixed['ip_address'], type='fixed', version=subnet.get('ip_version', 4),
            floating_ips=[model.IP(address=f['floating_ip_address'], type='floating',
                                   version=4)
                          for f in floating.get(fixed['ip_address'], [])]))
    vif_type = port.get('binding:vif_type') or model.VIF_TYPE_UNBOUND
    return model.VIF(
        id=port['id'], address=port['mac_address'], type=vif_type,
        devname=model.devname(port['id']),
        ovs_interfaceid=port['id'] if vif_type == model.VIF_TYPE_OVS else None,
        vnic_type=port.get('binding:vnic_type', 'normal'),
        active=port.get('status') == 'ACTIVE', details=details,
        profile=port.get('binding:profile') or {}, preserve_on_delete=preserve, tag=tag,
        security_groups=[{'id': g, 'name': (groups or {}).get(g, {}).get('name') or g}
                         for g in port.get('security_groups') or []],
        network=model.Network(
            id=network['id'], label=network.get('name') or network['id'],
            bridge=details.get('bridge_name') or CONF.neutron.ovs_bridge,
            subnets=[_subnet(subnets.get(sid, {'cidr': None}), ips)
                     for sid, ips in by_subnet.items()],
            meta={'mtu': network.get('mtu'), 'tenant_id': network.get('project_id'),
                  'tunneled': network.get('provider:network_type') in
                  ('geneve', 'vxlan', 'gre'),
                  'physical_network': network.get('provider:physical_network')}))


def find_security_groups(neutron: neutron_client.Client, project_id: str | None,
                         names: list[str]) -> list[dict[str, Any]]:
    """The security groups named (or with the id) ``names``: the project's own first,
    then any other the caller sees (keystone-less, Neutron owns everything itself).

    :raises SecurityGroupNotFound: a name matches no group.
    """
    groups = neutron.list_security_groups()
    found = []
    for name in names:
        matches = sorted((g for g in groups if name in (g['name'], g['id'])),
                         key=lambda g: g.get('project_id') != project_id)
        if not matches:
            raise exception.SecurityGroupNotFound(security_group_id=name)
        found.append(matches[0])
    return found


class API:
    """The port operations of one compute host (and of the API's interface calls)."""

    def __init__(self, neutron: neutron_client.Client | None = None) -> None:
        self._admin = neutron or neutron_client.Client(None, admin=True)
        self._extensions: cachetools.TTLCache[str, frozenset[str]] = \
            cachetools.TTLCache(1, ttl=EXTENSION_TTL)
        self._extensions_lock = threading.Lock()

    # -- building the network info --------------------------------------------------

    def network_info_for_ports(self, ports: list[dict[str, Any]], preserve: Iterable[str],
                               tags: dict[str, str | None] | None = None,
                               new: Iterable[str] = ()) -> model.NetworkInfo:
        """The network info of ``ports`` (in their order): one call for their networks,
        one for their subnets, one for their floating IPs (none when every port is
        ``new``, made just now: it has none), one for their security groups."""
        if not ports:
            return []
        network_ids = sorted({p['network_id'] for p in ports})
        networks = {n['id']: n for n in self._admin.list_networks(id=network_ids)}
        subnet_ids = sorted({f['subnet_id'] for p in ports for f in p.get('fixed_ips', [])})
        subnets = {s['id']: s for s in self._admin.list_subnets(id=subnet_ids)} \
            if subnet_ids else {}
        floating: dict[str, list[dict[str, Any]]] = {}
        made = set(new)
        older = [p['id'] for p in ports if p['id'] not in made]
        try:
            fips = self._admin.list_floatingips(port_id=older) if older else []
        except neutron_client.NeutronNotFound:
            fips = []  # no L3 (router) extension: no floating IPs
        for fip in fips:
            floating.setdefault(fip.get('fixed_ip_address') or '', []).append(fip)
        group_ids = sorted({g for p in ports for g in p.get('security_groups') or []})
        groups = {g['id']: g for g in self._admin.list_security_groups(
            id=group_ids, fields=['id', 'name'])} if group_ids else {}
        keep = set(preserve)
        return [build_vif(p, networks.get(p['network_id'], {'id': p['network_id']}),
                          subnets, floating, p['id'] in keep, (tags or {}).get(p['id']),
                          groups)
                for p in ports]

    def get_instance_nw_info(self, context: Ctx, instance: InstanceLike,
                             current: model.NetworkInfo | None = None) -> model.NetworkInfo:
        """The instance's network info as Neutron has it now; flags and tags from
        ``current`` (the cache) are kept, and the cache's port order."""
        current = current or []
        order = {vif['id']: n for n, vif in enumerate(current)}
        ports = sorted(self._admin.list_ports(device_id=instance.uuid),
                       key=lambda p: (order.get(p['id'], len(order)), p['id']))
        return self.network_info_for_ports(
            ports, [v['id'] for v in current if v.get('preserve_on_delete')],
            {v['id']: v.get('tag') for v in current})

    # -- allocating ---------------------------------------------------------------------

    def _security_group_ids(self, instance: InstanceLike, names: list[str]) -> list[str] | None:
        """The ids of the named groups (see ``find_security_groups``); None leaves the
        choice to Neutron (the project's ``default`` group), as for a lone ``default``."""
        names = sorted(set(names or []))
        if not names or names == ['default']:
            return None
        return [g['id'] for g in find_security_groups(self._admin, instance.project_id,
                                                      names)]

    def _bind_body(self, instance: InstanceLike, host: str) -> dict[str, Any]:
        return {'device_id': instance.uuid, 'binding:host_id': host,
                'device_owner': 'compute:%s' % (instance.availability_zone or
                                                CONF.default_availability_zone)}

    def allocate_for_instance(self, context: Ctx, instance: InstanceLike,
                              requests: list[NetworkRequest], host: str,
                              security_groups: list[str] | None = None
                              ) -> model.NetworkInfo:
        """Create (or take) and bind the ports of ``requests`` to ``host``; on any
        failure release what was done and raise.

        :raises PortBindingFailed: Neutron could not bind a port to this host.
        :raises NeutronConnectionFailed: Neutron could not be reached.
        """
        group_ids = self._security_group_ids(instance, security_groups or [])
        done: list[dict[str, Any]] = []
        preserve: list[str] = []
        tags: dict[str, str | None] = {}
        try:
            for request in requests:
                body = self._bind_body(instance, host)
                port_id = request.get('port_id')
                if port_id:
                    port = self._admin.update_port(port_id, body)
                    preserve.append(port['id'])
                else:
                    body.update(network_id=request['network_id'],
                                project_id=instance.project_id)
                    if request.get('fixed_ip'):
                        body['fixed_ips'] = [{'ip_address': request['fixed_ip']}]
                    if group_ids is not None:
                        body['security_groups'] = group_ids
                    port = self._admin.create_port(body)
                done.append(port)
                tags[port['id']] = request.get('tag')
                if port.get('binding:vif_type') == model.VIF_TYPE_BINDING_FAILED:
                    raise exception.PortBindingFailed(port_id=port['id'], host=host)
            return self.network_info_for_ports(
                done, preserve, tags, new=[p['id'] for p in done if p['id'] not in preserve])
        except Exception:
            self._release(done, preserve)
            raise

    # -- releasing and moving -----------------------------------------------------------

    def _release(self, ports: list[dict[str, Any]], preserve: Iterable[str]) -> None:
        """Delete the ports novalite made, unbind the user's; try every one."""
        keep = set(preserve)
        failed: Exception | None = None
        for port in ports:
            try:
                if port['id'] in keep:
                    self._admin.update_port(port['id'], dict(_UNBIND))
                else:
                    self._admin.delete_port(port['id'])
            except neutron_client.NeutronNotFound:
                pass
            except Exception as exc:
                LOG.warning('Could not release port %s: %s', port['id'], exc)
                failed = exc
        if failed is not None:
            raise failed

    def deallocate_for_instance(self, context: Ctx, instance: InstanceLike,
                                network_info: model.NetworkInfo | None = None,
                                preserve: Iterable[str] = ()) -> None:
        """Release every port of the instance that Neutron knows; ``preserve`` (and the
        VIFs of ``network_info`` marked so) are the user's, unbound and kept.

        :raises NeutronConnectionFailed: Neutron could not be reached (nothing, or only
            part, was released; the compute's port audit finishes it later).
        """
        keep = set(preserve) | {v['id'] for v in network_info or []
                                if v.get('preserve_on_delete')}
        self._release(self._admin.list_ports(device_id=instance.uuid), keep)

    def bind_ports_to_host(self, context: Ctx, instance: InstanceLike, host: str,
                           network_info: model.NetworkInfo) -> model.NetworkInfo:
        """Move the binding of the instance's ports to ``host`` (a resize, migration,
        evacuation or unshelve); returns the network info as bound there."""
        ports = [self._admin.update_port(vif['id'], self._bind_body(instance, host))
                 for vif in network_info]
        failed = [p['id'] for p in ports
                  if p.get('binding:vif_type') == model.VIF_TYPE_BINDING_FAILED]
        if failed:
            raise exception.PortBindingFailed(port_id=', '.join(failed), host=host)
        return self.network_info_for_ports(
            ports, [v['id'] for v in network_info if v.get('preserve_on_delete')],
            {v['id']: v.get('tag') for v in network_info})

    def unbind_ports(self, context: Ctx, instance: InstanceLike,
                     network_info: model.NetworkInfo) -> None:
        """Clear the host binding of the instance's ports, keeping them the instance's
        (a shelve offload: no host holds the server)."""
        for vif in network_info:
            try:
                self._admin.update_port(vif['id'], {'binding:host_id': None})
            except neutron_client.NeutronNotFound:
                LOG.info('Port %s of %s is gone', vif['id'], instance.uuid)

    # -- live migration: multiple port bindings (binding-extended) ---------------------

    @cachetools.cachedmethod(lambda self: self._extensions, key=lambda self: 'aliases',
                             lock=lambda self: self._extensions_lock)
    def _extension_aliases(self) -> frozenset[str]:
        return frozenset(e['alias'] for e in self._admin.list_extensions())

    def supports_port_binding_extension(self, context: Ctx) -> bool:
        """Whether Neutron binds a port to several hosts at once (its
        ``binding-extended`` extension), as a live migration wants; Neutron's list of
        extensions is asked at most every ``EXTENSION_TTL`` seconds.

        :raises NeutronConnectionFailed: Neutron could not be reached.
        """
        return BINDING_EXTENDED in self._extension_aliases()

    def create_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             network_info: model.NetworkInfo) -> model.NetworkInfo:
        """Bind every port of ``network_info`` to ``host`` too, beside its active
        binding (the destination of a live migration): the new bindings are inactive
        until ``activate_port_bindings``. A binding already there for ``host`` (a
        failed migration's) is made again. On any failure the bindings made here are
        deleted.

        :returns: the network info as bound on ``host`` (the new bindings' VIF type
            and details), flags and tags of ``network_info`` kept
        :raises PortBindingFailed: Neutron could not bind a port to ``host``.
        :raises NeutronConnectionFailed: Neutron could not be reached.
        """
        made: list[str] = []
        bindings: dict[str, dict[str, Any]] = {}
        port_id = ', '.join(model.port_ids(network_info))
        try:
            for vif in network_info:
                port_id = vif['id']
                binding = self._create_binding(vif, host)
                made.append(port_id)
                if binding.get('vif_type') == model.VIF_TYPE_BINDING_FAILED:
                    raise exception.PortBindingFailed(port_id=port_id, host=host)
                bindings[port_id] = binding
            port_id = ', '.join(made)
            return self._bound_network_info(network_info, host, bindings)
        except exception.NeutronConnectionFailed:
            self._undo_bindings(instance, made, host)
            raise
        except Exception as exc:
            LOG.error('Binding port %s of %s to %s failed: %s', port_id, instance.uuid,
                      host, exc)
            self._undo_bindings(instance, made, host)
            if isinstance(exc, exception.PortBindingFailed):
                raise
            raise exception.PortBindingFailed(port_id=port_id, host=host) from exc

    def _create_binding(self, vif: model.VIF, host: str) -> dict[str, Any]:
        """The port's new binding on ``host``. An inactive binding there already is a
        failed migration's, left behind: deleted and made again, as Nova. An active
        one is the port's own binding: ``host`` cannot be a destination (conflict)."""
        body = {'host': host, 'vnic_type': vif.get('vnic_type') or 'normal',
                'profile': dict(vif.get('profile') or {})}
        try:
            return self._admin.create_port_binding(vif['id'], body)
        except neutron_client.NeutronConflict:
            if self._admin.show_port_binding(vif['id'], host).get('status') == 'ACTIVE':
                raise
            LOG.info('Port %s had an inactive binding on %s already: made again',
                     vif['id'], host)
            try:
                self._admin.delete_port_binding(vif['id'], host)
            except neutron_client.NeutronNotFound:
                pass
            return self._admin.create_port_binding(vif['id'], body)

    def _bound_network_info(self, network_info: model.NetworkInfo, host: str,
                            bindings: dict[str, dict[str, Any]]) -> model.NetworkInfo:
        """The network info of the ports with ``bindings`` (by port) in place of their
        active binding."""
        if not bindings:
            return []
        found = {p['id']: p for p in self._admin.list_ports(id=sorted(bindings))}
        ports = []
        for vif in network_info:
            if vif['id'] not in found:
                raise exception.PortNotFound(port_id=vif['id'])
            binding = bindings[vif['id']]
            ports.append({**found[vif['id']], 'binding:host_id': host,
                          'binding:vif_type': binding.get('vif_type'),
                          'binding:vif_details': binding.get('vif_details') or {},
                          'binding:vnic_type': binding.get('vnic_type') or 'normal',
                          'binding:profile': binding.get('profile') or {}})
        return self.network_info_for_ports(
            ports, [v['id'] for v in network_info if v.get('preserve_on_delete')],
            {v['id']: v.get('tag') for v in network_info})

    def _undo_bindings(self, instance: InstanceLike, port_ids: list[str],
                       host: str) -> None:
        """Delete the bindings on ``host`` made by a ``create_port_bindings`` that
        failed; what cannot be deleted is logged (the failure reported is the first)."""
        try:
            self.delete_port_bindings(None, instance, host, port_ids)
        except exception.NeutronConnectionFailed as exc:
            LOG.warning('Could not delete the bindings of ports %s on %s: %s',
                        ', '.join(port_ids), host, exc)

    def activate_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                               network_info: model.NetworkInfo) -> model.NetworkInfo:
        """Make each port's binding on ``host`` the active one (the guest runs there
        now); the binding active before goes inactive. One already active is fine.
        Every port is tried before a failure is raised.

        :returns: the network info of the ports as Neutron has them now (flags and
            tags of ``network_info`` kept)
        :raises NeutronError: Neutron refused to activate a binding (none on ``host``).
        :raises NeutronConnectionFailed: Neutron could not be reached.
        """
        failed: Exception | None = None
        for vif in network_info:
            try:
                self._admin.activate_port_binding(vif['id'], host)
            except neutron_client.NeutronConflict:
                LOG.info('The binding of port %s on %s is active already', vif['id'],
                         host)
            except (neutron_client.NeutronError, exception.NeutronConnectionFailed) as exc:
                LOG.warning('Could not activate the binding of port %s of %s on %s: %s',
                            vif['id'], instance.uuid, host, exc)
                failed = failed or exc
        if failed is not None:
            raise failed
        return self._ports_now(network_info)

    def _ports_now(self, network_info: model.NetworkInfo) -> model.NetworkInfo:
        """The network info of ``network_info``'s ports re-read (in its order; a port
        gone is left out)."""
        if not network_info:
            return []
        found = {p['id']: p for p in self._admin.list_ports(
            id=sorted(model.port_ids(network_info)))}
        return self.network_info_for_ports(
            [found[v['id']] for v in network_info if v['id'] in found],
            [v['id'] for v in network_info if v.get('preserve_on_delete')],
            {v['id']: v.get('tag') for v in network_info})

    def delete_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             port_ids: Iterable[str]) -> None:
        """Delete the ports' bindings on ``host`` (a migration's other end); one not
        there is fine, any other refusal is logged and the other ports go on.

        :raises NeutronConnectionFailed: Neutron could not be reached (after every
            port was tried).
        """
        unreachable: exception.NeutronConnectionFailed | None = None
        for port_id in port_ids:
            try:
                self._admin.delete_port_binding(port_id, host)
            except neutron_client.NeutronNotFound:
                pass
            except exception.NeutronConnectionFailed as exc:
                unreachable = unreachable or exc
            except neutron_client.NeutronError as exc:
                LOG.warning('Could not delete the binding of port %s of %s on %s: %s',
                            port_id, instance.uuid, host, exc)
        if unreachable is not None:
            raise unreachable

    # -- one interface (os-interface, addFixedIp and removeFixedIp) ---------------------

    def deallocate_port_for_instance(self, context: Ctx, instance: InstanceLike,
                                     vif: model.VIF) -> None:
        """Release one port of the instance: deleted when novalite made it, unbound and
        kept when the user passed it in (the VIF's ``preserve_on_delete``)."""
        self._release([{'id': vif['id']}],
                      [vif['id']] if vif.get('preserve_on_delete') else [])

    def add_fixed_ip_to_instance(self, context: Ctx, instance: InstanceLike,
                                 network_id: str, current: model.NetworkInfo
                                 ) -> model.NetworkInfo:
        """One more fixed IP on the instance's port on ``network_id``, from the first of
        the network's subnets with an address free (Nova's); returns the network info.

        :raises NetworkNotFoundForInstance: the network has no subnet, the instance no
            port on it, or no subnet an address to give.
        """
        subnets = self._admin.list_subnets(network_id=network_id)
        ports = self._admin.list_ports(device_id=instance.uuid, network_id=network_id) \
            if subnets else []
        for port in ports:
            for subnet in subnets:
                try:
                    self._admin.update_port(port['id'], {'fixed_ips': [
                        *port['fixed_ips'], {'subnet_id': subnet['id']}]})
                except neutron_client.NeutronConflict as exc:
                    LOG.info('No address for port %s on subnet %s: %s', port['id'],
                             subnet['id'], exc.detail)
                    continue
                return self.get_instance_nw_info(context, instance, current)
        raise exception.NetworkNotFoundForInstance(instance_id=instance.uuid)

    def remove_fixed_ip_from_instance(self, context: Ctx, instance: InstanceLike,
                                      address: str, current: model.NetworkInfo
                                      ) -> model.NetworkInfo:
        """Take ``address`` off the instance's port that has it; returns the network info.

        :raises FixedIpNotFoundForInstance: no port of the instance has it.
        """
        ports = self._admin.list_ports(device_id=instance.uuid,
                                       fixed_ips='ip_address=%s' % address)
        if not ports:
            raise exception.FixedIpNotFoundForInstance(instance_uuid=instance.uuid,
                                                       ip=address)
        port = ports[0]
        self._admin.update_port(port['id'], {'fixed_ips': [
            f for f in port['fixed_ips'] if f['ip_address'] != address]})
        return self.get_instance_nw_info(context, instance, current)
