"""Neutron's floating IPs for the os-floating-ips proxy and the addFloatingIp and
removeFloatingIp server actions, as the floating IP part of Nova's
``nova/network/neutron.py``.

A floating IP is returned as Neutron has it, plus ``network_details`` (its external
network: the proxy's "pool") and ``port_details`` (the port it is on, for the server's
id), both read in one query for a whole list.
"""
from __future__ import annotations

from typing import Any

from oslo_utils import uuidutils

from novalite import exception
from novalite.conf import CONF
from novalite.network import client as neutron_client
from novalite.network import security_group_api as sg_api

Neutron = neutron_client.Client
FloatingIP = dict[str, Any]

# Neutron's error types that mean the pool has no address left.
_EXHAUSTED = ('IpAddressGenerationFailure', 'ExternalIpAddressExhausted')


def _add_details(neutron: Neutron, fips: list[FloatingIP]) -> list[FloatingIP]:
    """Each floating IP with its network and port (one query for each kind)."""
    network_ids = sorted({f['floating_network_id'] for f in fips})
    networks = {n['id']: n for chunk in sg_api.chunks(network_ids)
                for n in neutron.get('/networks', id=chunk,
                                     fields=['id', 'name'])['networks']}
    # With the fip-port-details extension Neutron already says which device it is on.
    port_ids = sorted({f['port_id'] for f in fips if f.get('port_id') and
                       'port_details' not in f})
    ports = {p['id']: p for chunk in sg_api.chunks(port_ids)
             for p in neutron.get('/ports', id=chunk,
                                  fields=['id', 'device_id'])['ports']}
    for fip in fips:
        network = networks.get(fip['floating_network_id'])
        if network is None:
            raise exception.NetworkNotFound(network_id=fip['floating_network_id'])
        fip['network_details'] = network
        if 'port_details' not in fip:
            fip['port_details'] = ports.get(fip.get('port_id') or '')
    return fips


def _list(neutron: Neutron, **filters: object) -> list[FloatingIP]:
    try:
        return neutron.get('/floatingips', **filters)['floatingips']
    except neutron_client.NeutronNotFound:
        return []  # no L3 (router) extension: no floating IPs


def get(neutron: Neutron, fip_id: str) -> FloatingIP:
    try:
        fip = neutron.get('/floatingips/%s' % fip_id)['floatingip']
    except neutron_client.NeutronNotFound as exc:
        raise exception.FloatingIpNotFound(id=fip_id) from exc
    return _add_details(neutron, [fip])[0]


def _by_address(neutron: Neutron, address: str | None) -> FloatingIP:
    fips = _list(neutron, floating_ip_address=address) if address else []
    if not fips:
        raise exception.FloatingIpNotFoundForAddress(address=address)
    if len(fips) > 1:
        raise exception.FloatingIpMultipleFoundForAddress(address=address)
    return fips[0]


def get_by_address(neutron: Neutron, address: str) -> FloatingIP:
    return _add_details(neutron, [_by_address(neutron, address)])[0]


def list_for_project(neutron: Neutron, project_id: str | None) -> list[FloatingIP]:
    fips = _list(neutron, project_id=project_id) if project_id else _list(neutron)
    return _add_details(neutron, fips)


def pools(neutron: Neutron) -> list[dict[str, Any]]:
    """The floating IP pools: the external networks."""
    return neutron.get('/networks', **{'router:external': True})['networks']


def _pool_id(neutron: Neutron, name_or_id: str) -> str:
    by = 'id' if uuidutils.is_uuid_like(name_or_id) else 'name'
    nets = neutron.get('/networks', fields='id',
                       **{'router:external': True, by: name_or_id})['networks']
    if not nets:
        raise exception.FloatingIpPoolNotFound()
    if len(nets) > 1:
        raise exception.NoUniqueMatch(
            message="Multiple floating IP pools matches found for name '%s'" % name_or_id)
    return nets[0]['id']


def allocate(neutron: Neutron, project_id: str | None, pool: str | None) -> FloatingIP:
    """A new floating IP of the project from ``pool`` (``[neutron] default_floating_pool``
    when None).

    :raises FloatingIpPoolNotFound: no external network of that name or id.
    :raises NoMoreFloatingIps: the pool has no address left.
    :raises FloatingIpLimitExceeded: over the project's quota.
    """
    body: dict[str, Any] = {
        'floating_network_id': _pool_id(neutron, pool or CONF.neutron.default_floating_pool)}
    if project_id:
        body['project_id'] = project_id
    try:
        fip = neutron.post('/floatingips', {'floatingip': body})['floatingip']
    except neutron_client.NeutronError as exc:
        if exc.neutron_type in _EXHAUSTED:
            raise exception.NoMoreFloatingIps(message=exc.detail) from exc
        if exc.neutron_type == 'OverQuota':
            raise exception.FloatingIpLimitExceeded(message=exc.detail) from exc
        if exc.status == 400:
            raise exception.FloatingIpBadRequest(reason=exc.detail) from exc
        raise
    return _add_details(neutron, [fip])[0]


def release(neutron: Neutron, fip: FloatingIP) -> None:
    """Delete the floating IP (associated or not)."""
    try:
        neutron.delete('/floatingips/%s' % fip['id'])
    except neutron_client.NeutronNotFound as exc:
        raise exception.FloatingIpNotFoundForAddress(
            address=fip['floating_ip_address']) from exc


def server_of(neutron: Neutron, address: str) -> str | None:
    """The id of the server whose port has the floating IP ``address``, if any."""
    fip = _by_address(neutron, address)
    if not fip.get('port_id'):
        return None
    try:
        port = neutron.get('/ports/%s' % fip['port_id'])['port']
    except neutron_client.NeutronNotFound:
        return None  # the server is being deleted
    return port.get('device_id') or None


def associate(neutron: Neutron, server_id: str, floating_address: str,
              fixed_address: str) -> None:
    """Point ``floating_address`` at the server's port that has ``fixed_address``.

    :raises FixedIpNotFoundForAddress: no port of the server has that fixed address.
    :raises FloatingIpNotFoundForAddress: no such floating IP.
    :raises FloatingIpAssociateFailed: Neutron refused (e.g. no router to that network).
    """
    port_id = next((p['id'] for p in neutron.get('/ports', device_id=server_id)['ports']
                    for ip in p.get('fixed_ips', []) if ip['ip_address'] == fixed_address),
                   None)
    if port_id is None:
        raise exception.FixedIpNotFoundForAddress(address=fixed_address)
    fip = _by_address(neutron, floating_address)
    try:
        neutron.put('/floatingips/%s' % fip['id'], {'floatingip': {
            'port_id': port_id, 'fixed_ip_address': fixed_address}})
    except neutron_client.NeutronError as exc:
        if exc.status in (400, 404, 409):
            raise exception.FloatingIpAssociateFailed(message=exc.detail) from exc
        raise


def disassociate(neutron: Neutron, address: str) -> None:
    fip = _by_address(neutron, address)
    neutron.put('/floatingips/%s' % fip['id'], {'floatingip': {'port_id': None}})
