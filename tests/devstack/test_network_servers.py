"""Servers on real networks: the real Neutron (ML2/OVN) behind a devstack-style stack,
driven by openstackclient and openstacksdk.

The computes run the fake driver (nothing plugs, nothing waits, as Nova's fake driver):
these tests are about the ports, their binding, their addresses and their release.
"""
from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from tests.devstack import clients, network
from tests.devstack.clients import osc
from tests.devstack.harness import Stack

STACK = {'network': True}
CIDR = '10.20.0.0/24'


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'servers-net', CIDR)


def _in_subnet(address: str) -> bool:
    return ipaddress.ip_address(address) in ipaddress.ip_network(CIDR)


def test_server_create_network_wait_shows_its_address_and_delete_removes_the_port(
        stack: Stack, net: dict[str, Any]) -> None:
    server = osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor', 'm1.nano',
                 '--network', 'servers-net', '--wait', 'net-vm1')
    assert server['status'] == 'ACTIVE'
    ports = network.ports_of(stack, server['id'])
    assert len(ports) == 1
    port = ports[0]
    assert port['binding:host_id'] == server['OS-EXT-SRV-ATTR:host']
    assert port['device_owner'] == 'compute:nova'
    assert port['binding:vif_type'] == 'ovs'
    address = port['fixed_ips'][0]['ip_address']
    assert _in_subnet(address)

    shown = osc(stack, 'server', 'show', server['id'])
    assert shown['addresses'] == {'servers-net': [address]}
    listed = {s['ID']: s for s in osc(stack, 'server', 'list')}
    assert listed[server['id']]['Networks'] == {'servers-net': [address]}
    view = clients.server(stack, server['id'])
    assert view['addresses'] == {'servers-net': [{
        'version': 4, 'addr': address, 'OS-EXT-IPS:type': 'fixed',
        'OS-EXT-IPS-MAC:mac_addr': port['mac_address']}]}
    ips = stack.api('GET', '/servers/%s/ips' % server['id'])
    assert ips.json() == {'addresses': {'servers-net': [{'version': 4, 'addr': address}]}}
    one = stack.api('GET', '/servers/%s/ips/servers-net' % server['id'])
    assert one.json() == {'servers-net': [{'version': 4, 'addr': address}]}
    assert stack.api('GET', '/servers/%s/ips/nowhere' % server['id']).status_code == 404

    osc(stack, 'server', 'delete', '--wait', server['id'], fmt_json=False)
    assert network.port(stack, port['id']) is None
    assert network.ports_of(stack, server['id']) == []


def test_server_create_with_a_port_binds_it_and_keeps_it_after_delete(
        stack: Stack, net: dict[str, Any]) -> None:
    made = osc(stack, 'port', 'create', '--network', 'servers-net', 'user-port')
    server = osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor', 'm1.nano',
                 '--port', made['id'], '--wait', 'net-vm2')
    assert server['status'] == 'ACTIVE'
    bound = network.port(stack, made['id'])
    assert bound is not None
    assert bound['device_id'] == server['id']
    assert bound['binding:host_id'] == server['OS-EXT-SRV-ATTR:host']
    # A port in use cannot boot a second server (Nova: 409).
    resp = stack.api('POST', '/servers', json={'server': {
        'name': 'twice', 'imageRef': stack.image_id,
        'flavorRef': clients.flavor_id(stack, 'm1.nano'),
        'networks': [{'port': made['id']}]}})
    assert resp.status_code == 409, resp.text

    osc(stack, 'server', 'delete', '--wait', server['id'], fmt_json=False)
    kept = network.port(stack, made['id'])
    assert kept is not None, 'the user\'s port was deleted with the server'
    assert kept['device_id'] == '' and kept['binding:host_id'] in ('', None)
    osc(stack, 'port', 'delete', made['id'], fmt_json=False)


def test_openstacksdk_create_server_wait_gets_an_ip(stack: Stack,
                                                    net: dict[str, Any]) -> None:
    conn = clients.sdk(stack)
    try:
        server = conn.create_server(name='sdk-net-vm', image='cirros-tiny',
                                    flavor='m1.nano', network='servers-net', wait=True,
                                    timeout=120)
        assert server.status == 'ACTIVE'
        assert server.private_v4 or server.accessIPv4 or server.addresses
        addresses = [a['addr'] for a in server.addresses['servers-net']]
        assert addresses and all(_in_subnet(a) for a in addresses)
        assert conn.delete_server(server.id, wait=True, timeout=120)
        assert network.ports_of(stack, server.id) == []
    finally:
        conn.close()


def test_bad_network_requests_answer_novas_codes(stack: Stack, net: dict[str, Any]) -> None:
    flavor = clients.flavor_id(stack, 'm1.nano')

    def create(networks: Any, **extra: Any) -> Any:
        return stack.api('POST', '/servers', json={'server': {
            'name': 'bad', 'imageRef': stack.image_id, 'flavorRef': flavor,
            'networks': networks, **extra}})

    missing = '00000000-0000-4000-8000-000000000001'
    resp = create([{'uuid': missing}])
    assert resp.status_code == 400 and missing in resp.text
    resp = create([{'port': missing}])
    assert resp.status_code == 400 and missing in resp.text
    resp = create([{'uuid': net['id'], 'fixed_ip': '10.20.0.50'}], max_count=2)
    assert resp.status_code == 400
    resp = create([{'uuid': net['id']}], security_groups=[{'name': 'no-such-group'}])
    assert resp.status_code == 400 and 'no-such-group' in resp.text
    # Two networks visible and none named: ambiguous (409) before 2.37's required list.
    osc(stack, 'network', 'create', 'second-net')
    osc(stack, 'subnet', 'create', '--network', 'second-net', '--subnet-range',
        '10.21.0.0/24', 'second-subnet')
    resp = stack.api('POST', '/servers', json={'server': {
        'name': 'ambiguous', 'imageRef': stack.image_id, 'flavorRef': flavor}},
        microversion='2.1')
    assert resp.status_code == 409, resp.text
    osc(stack, 'network', 'delete', 'second-net', fmt_json=False)
    # Nothing was written for any of them.
    assert not [s for s in osc(stack, 'server', 'list') if s['Name'] in ('bad', 'ambiguous')]


def test_a_port_quota_exceeded_answers_403_and_writes_nothing(stack: Stack,
                                                              net: dict[str, Any]) -> None:
    assert stack.neutron is not None
    # noauth2's admin:admin is project "admin": its ports count against its quota, which
    # Neutron lets go no lower than what the project uses (other modules' ports).
    used = len(stack.neutron.api('GET', '/ports?project_id=admin').json()['ports'])
    resp = stack.neutron.api('PUT', '/quotas/admin', json={'quota': {'port': used}})
    assert resp.status_code == 200, resp.text
    try:
        resp = stack.api('POST', '/servers', json={'server': {
            'name': 'over-quota', 'imageRef': stack.image_id,
            'flavorRef': clients.flavor_id(stack, 'm1.nano'),
            'networks': [{'uuid': net['id']}]}})
        assert resp.status_code == 403, resp.text
        assert resp.json()['forbidden']['message'] == 'Maximum number of ports exceeded'
    finally:
        stack.neutron.api('DELETE', '/quotas/admin')
    assert 'over-quota' not in {s['Name'] for s in osc(stack, 'server', 'list')}
