"""The API side of a server's networks: what a create asks for, checked and resolved.

``resolve`` turns the ``networks`` of a create body into the list of network requests
the compute host allocates (each ``{network_id, port_id, fixed_ip, tag}``), after the
checks Nova makes before anything is written: the networks exist, are visible and
have a subnet; a port exists and is not in use; a fixed IP is free; one port or one
fixed IP is never given to several servers; the project's port quota holds them.
"""
from __future__ import annotations

from typing import Any, TypedDict

from novalite import exception
from novalite.conf import CONF
from novalite.network import client as neutron_client
from novalite.policies import servers as srv_policies


class NetworkRequest(TypedDict, total=False):
    network_id: str | None
    port_id: str | None
    fixed_ip: str | None
    tag: str | None


def parse(networks: list[dict[str, Any]]) -> list[NetworkRequest]:
    """The body's ``networks`` list as network requests (no lookup yet)."""
    return [NetworkRequest(network_id=n.get('uuid'), port_id=n.get('port'),
                           fixed_ip=n.get('fixed_ip'), tag=n.get('tag')) for n in networks]


def _available_networks(neutron: neutron_client.Client,
                        project_id: str | None) -> list[dict[str, Any]]:
    """The project's own networks and the shared ones. A keystone-less Neutron owns
    every network itself (its noauth knows no projects): there, every network that is
    not external."""
    if not CONF.neutron.auth_type:
        return [n for n in neutron.list_networks()
                if n.get('shared') or not n.get('router:external')]
    nets = neutron.list_networks(project_id=project_id, shared=False) if project_id else []
    return nets + neutron.list_networks(shared=True)


def _check_ports(neutron: neutron_client.Client, requests: list[NetworkRequest],
                 max_count: int) -> None:
    for request in requests:
        if not request.get('port_id'):
            continue
        if max_count > 1:
            raise exception.InvalidInput(reason=(
                'Unable to launch multiple instances with a single configured port ID. '
                'Please launch your instance one by one with different ports.'))
        port_id = str(request['port_id'])
        try:
            port = neutron.show_port(port_id)
        except neutron_client.NeutronNotFound as exc:
            raise exception.PortNotFound(port_id=port_id) from exc
        if port.get('device_id'):
            raise exception.PortInUse(port_id=port_id)
        if not port.get('fixed_ips'):
            raise exception.InvalidInput(
                reason='Port %s requires a FixedIP in order to be used.' % port['id'])
        request['network_id'] = port['network_id']


def _check_networks(neutron: neutron_client.Client, context: neutron_client.Context,
                    requests: list[NetworkRequest], max_count: int) -> None:
    wanted = sorted({str(r['network_id']) for r in requests
                     if r.get('network_id') and not r.get('port_id')})
    if not wanted:
        return
    found = {n['id']: n for n in neutron.list_networks(id=wanted)}
    for network_id in wanted:
        network = found.get(network_id)
        if network is None:
            raise exception.NetworkNotFound(network_id=network_id)
        if not network.get('subnets'):
            raise exception.NetworkRequiresSubnet(network_uuid=network_id)
        if network.get('router:external') and not network.get('shared') and not \
                context.can(srv_policies.NETWORK_ATTACH_EXTERNAL,
                            {'project_id': context.project_id}, fatal=False):
            raise exception.ExternalNetworkAttachForbidden(network_uuid=network_id)
    for request in requests:
        if not request.get('fixed_ip') or request.get('port_id'):
            continue
        if max_count > 1:
            raise exception.InvalidFixedIpAndMaxCountRequest(
                reason='max_count cannot be greater than 1 if an fixed_ip is specified.')
        in_use = neutron.list_ports(network_id=request['network_id'],
                                    fixed_ips='ip_address=%s' % request['fixed_ip'])
        if in_use:
            raise exception.FixedIpAlreadyInUse(address=request['fixed_ip'],
                                                instance_uuid=in_use[0].get('device_id'))


def _check_port_quota(neutron: neutron_client.Client, project_id: str | None,
                      requests: list[NetworkRequest], min_count: int, max_count: int) -> int:
    """The number of servers the project's port quota allows (at most ``max_count``)."""
    needed = sum(1 for r in requests if not r.get('port_id'))
    if not needed or not project_id:
        return max_count
    try:
        limit = neutron.show_quota(project_id).get('port', -1)
    except neutron_client.NeutronNotFound:
        return max_count  # no quota extension: no limit
    if limit < 0:
        return max_count
    used = len(neutron.list_ports(project_id=project_id, fields='id'))
    allowed = (limit - used) // needed
    if allowed < min_count:
        raise exception.PortLimitExceeded()
    return min(max_count, allowed)


def _auto(neutron: neutron_client.Client, context: neutron_client.Context, auto_allocate: bool
          ) -> list[NetworkRequest]:
    """No specific network: the only one available, none, or (``auto``) the project's
    auto-allocated network; several available is ambiguous."""
    nets = _available_networks(neutron, context.project_id)
    if len(nets) > 1:
        raise exception.NetworkAmbiguous()
    if nets:
        return [NetworkRequest(network_id=nets[0]['id'])]
    if not auto_allocate:
        return []
    try:
        topology = neutron.get('/auto-allocated-topology/%s' % context.project_id)
    except neutron_client.NeutronError as exc:
        raise exception.UnableToAutoAllocateNetwork(project_id=context.project_id) from exc
    return [NetworkRequest(network_id=topology['auto_allocated_topology']['id'])]


def resolve(context: neutron_client.Context, networks: list[dict[str, Any]] | str | None,
            min_count: int, max_count: int, security_groups: list[str] | None = None
            ) -> tuple[list[NetworkRequest], int]:
    """Check a create's ``networks`` and return (the network requests, the number of
    servers the port quota allows). Without Neutron, only "none", "auto" or nothing is
    accepted, and servers get no ports.

    :raises NetworkNotFound, PortNotFound, PortInUse, NetworkAmbiguous,
        FixedIpAlreadyInUse, PortLimitExceeded, NeutronConnectionFailed, ...
    """
    groups = sorted(set(security_groups or []) - {'default'})
    if not neutron_client.configured():
        if isinstance(networks, list) and networks:
            raise exception.InvalidInput(reason=(
                'This cloud has no network service (Neutron) configured: use "none" '
                'or "auto", or leave networks out.'))
        if groups:
            raise exception.InvalidInput(reason=(
                'This cloud has no network service (Neutron) configured: only the '
                '"default" security group is accepted.'))
        return [], max_count
    if networks == 'none':
        return [], max_count
    neutron = neutron_client.Client(context)
    if groups:
        from novalite.network.neutron import find_security_groups
        find_security_groups(neutron, context.project_id, groups)
    if not isinstance(networks, list):
        requests = _auto(neutron, context, auto_allocate=networks == 'auto')
    else:
        requests = parse(networks)
        _check_ports(neutron, requests, max_count)
        _check_networks(neutron, context, requests, max_count)
    count = _check_port_quota(neutron, context.project_id, requests, min_count, max_count)
    return requests, count


def resolve_attach(context: neutron_client.Context, network_id: str | None, port_id: str | None,
                   fixed_ip: str | None = None, tag: str | None = None) -> NetworkRequest:
    """The one network request of an interface attach (os-interface, addFixedIp),
    checked as a create's: the port exists and is free, the network exists with a
    subnet, the fixed IP is free, the port quota holds a new port. With neither network
    nor port: the only network available.

    :raises InvalidInput: no Neutron is configured.
    :raises InterfaceAttachFailedNoNetwork, NetworkAmbiguous, PortNotFound, PortInUse,
        NetworkNotFound, NetworkRequiresSubnet, FixedIpAlreadyInUse, PortLimitExceeded,
        NeutronConnectionFailed:
    """
    if not neutron_client.configured():
        raise exception.InvalidInput(reason=(
            'This cloud has no network service (Neutron) configured: servers have no '
            'network interfaces.'))
    neutron = neutron_client.Client(context)
    if not network_id and not port_id:
        found = _auto(neutron, context, auto_allocate=False)
        if not found:
            raise exception.InterfaceAttachFailedNoNetwork(project_id=context.project_id)
        network_id = found[0]['network_id']
    request = NetworkRequest(network_id=network_id, port_id=port_id, fixed_ip=fixed_ip,
                             tag=tag)
    _check_ports(neutron, [request], 1)
    _check_networks(neutron, context, [request], 1)
    _check_port_quota(neutron, context.project_id, [request], 1, 1)
    return request
