"""Security groups, floating IPs and the other proxies of the Compute API against the real
Neutron (ML2/OVN) of a devstack-style stack, driven by openstackclient and REST.

The computes run the fake driver: servers are ACTIVE at once, their ports real.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tempest.lib.common import rest_client

from tests.devstack import clients, network
from tests.devstack.clients import osc
from tests.devstack.harness import Stack
from tests.functional.test_response_schemas import schema

STACK = {'network': True}
CIDR = '10.30.0.0/24'
PUBLIC_CIDR = '172.24.40.0/24'
PROXY = '2.35'


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'sg-net', CIDR)


@pytest.fixture(scope='module')
def server(stack: Stack, net: dict[str, Any]) -> dict[str, Any]:
    made = osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor', 'm1.nano',
               '--network', 'sg-net', '--wait', 'sg-vm')
    assert made['status'] == 'ACTIVE'
    return made


def _neutron(stack: Stack, method: str, path: str, **kwargs: Any) -> Any:
    assert stack.neutron is not None
    resp = stack.neutron.api(method, path, **kwargs)
    return resp


def _port(stack: Stack, server_id: str) -> dict[str, Any]:
    (port,) = _neutron(stack, 'GET', '/ports?device_id=%s' % server_id).json()['ports']
    return port


class _Headers(dict):
    status: int


def _valid(resp: Any, module: str, name: str, version: str = PROXY) -> Any:
    """The response checked by tempest's validator against tempest's schema; its body."""
    expected = schema(module, name, version)
    assert resp.status_code in expected['status_code'], resp.text
    headers = _Headers({k.lower(): v for k, v in resp.headers.items()})
    headers.status = resp.status_code
    body = resp.json() if resp.content else ''
    rest_client.RestClient.validate_response(expected, headers, body)
    return body


def _action(stack: Stack, server_id: str, body: dict, version: str = 'latest') -> Any:
    return stack.api('POST', '/servers/%s/action' % server_id, microversion=version,
                     json=body)


def test_server_add_and_remove_security_group(stack: Stack, server: dict[str, Any]) -> None:
    sg1 = osc(stack, 'security', 'group', 'create', 'sg1')
    osc(stack, 'server', 'add', 'security', 'group', server['id'], 'sg1', fmt_json=False)
    port = _port(stack, server['id'])
    assert sg1['id'] in port['security_groups'] and len(port['security_groups']) == 2
    view = clients.server(stack, server['id'])
    assert {'name': 'sg1'} in view['security_groups']
    assert {'name': 'default'} in view['security_groups']
    assert 'sg1' in str(osc(stack, 'server', 'show', server['id'])['security_groups'])
    listed = stack.api('GET', '/servers/%s/os-security-groups' % server['id'])
    groups = _valid(listed, 'security_groups', 'list_security_groups')
    assert {g['name'] for g in groups['security_groups']} == {'default', 'sg1'}
    default = next(g for g in groups['security_groups'] if g['name'] == 'default')
    assert default['rules'], 'the default group lets its own members in'

    # Neutron refuses a group twice on a port; Nova passes that on as 400.
    twice = _action(stack, server['id'], {'addSecurityGroup': {'name': 'sg1'}})
    assert twice.status_code == 400, twice.text
    missing = _action(stack, server['id'], {'addSecurityGroup': {'name': 'no-such'}})
    assert missing.status_code == 404 and 'no-such' in missing.text

    osc(stack, 'server', 'remove', 'security', 'group', server['id'], 'sg1', fmt_json=False)
    assert _port(stack, server['id'])['security_groups'] == [
        g for g in port['security_groups'] if g != sg1['id']]
    assert {'name': 'sg1'} not in clients.server(stack, server['id'])['security_groups']
    again = _action(stack, server['id'], {'removeSecurityGroup': {'name': 'sg1'}})
    assert again.status_code == 404 and 'not associated' in again.text
    osc(stack, 'security', 'group', 'delete', 'sg1', fmt_json=False)


def test_a_port_without_port_security_takes_no_group(stack: Stack,
                                                     net: dict[str, Any]) -> None:
    port = osc(stack, 'port', 'create', '--network', 'sg-net', '--disable-port-security',
               '--no-security-group', 'open-port')
    made = osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor', 'm1.nano',
               '--port', port['id'], '--wait', 'sg-open')
    resp = _action(stack, made['id'], {'addSecurityGroup': {'name': 'default'}})
    assert resp.status_code == 400 and 'port_security_enabled' in resp.text
    assert 'security_groups' not in clients.server(stack, made['id'])
    osc(stack, 'server', 'delete', '--wait', made['id'], fmt_json=False)
    osc(stack, 'port', 'delete', port['id'], fmt_json=False)


def test_security_group_proxies_at_235_and_gone_at_236(stack: Stack) -> None:
    created = _valid(stack.api('POST', '/os-security-groups', microversion=PROXY, json={
        'security_group': {'name': 'proxied', 'description': 'through novalite'}}),
        'security_groups', 'create_security_group')['security_group']
    group_id = created['id']
    in_neutron = _neutron(stack, 'GET', '/security-groups/%s' % group_id).json()
    assert in_neutron['security_group']['name'] == 'proxied'
    assert in_neutron['security_group']['project_id'] == created['tenant_id'] == 'admin'
    listed = _valid(stack.api('GET', '/os-security-groups', microversion=PROXY),
                    'security_groups', 'list_security_groups')
    assert group_id in {g['id'] for g in listed['security_groups']}
    _valid(stack.api('GET', '/os-security-groups/%s' % group_id, microversion=PROXY),
           'security_groups', 'get_security_group')
    _valid(stack.api('PUT', '/os-security-groups/%s' % group_id, microversion=PROXY,
                     json={'security_group': {'name': 'proxied2', 'description': 'new'}}),
           'security_groups', 'update_security_group')
    assert _neutron(stack, 'GET', '/security-groups/%s' % group_id).json()[
        'security_group']['name'] == 'proxied2'

    rule = _valid(stack.api('POST', '/os-security-group-rules', microversion=PROXY, json={
        'security_group_rule': {'parent_group_id': group_id, 'ip_protocol': 'tcp',
                                'from_port': 22, 'to_port': 22, 'cidr': '10.0.0.0/8'}}),
        'security_groups', 'create_security_group_rule')['security_group_rule']
    shown = _neutron(stack, 'GET', '/security-group-rules/%s' % rule['id']).json()[
        'security_group_rule']
    assert (shown['direction'], shown['protocol'], shown['port_range_min'],
            shown['remote_ip_prefix']) == ('ingress', 'tcp', 22, '10.0.0.0/8')
    bad = stack.api('POST', '/os-security-group-rules', microversion=PROXY, json={
        'security_group_rule': {'parent_group_id': group_id, 'ip_protocol': 'tcp',
                                'from_port': 30, 'to_port': 20, 'cidr': '10.0.0.0/8'}})
    assert bad.status_code == 400

    for method, path in (('GET', '/os-security-groups'),
                         ('GET', '/os-security-groups/%s' % group_id),
                         ('DELETE', '/os-security-groups/%s' % group_id),
                         ('DELETE', '/os-security-group-rules/%s' % rule['id'])):
        assert stack.api(method, path, microversion='2.36').status_code == 404, path

    _valid(stack.api('DELETE', '/os-security-group-rules/%s' % rule['id'],
                     microversion=PROXY), 'security_groups', 'delete_security_group_rule')
    assert _neutron(stack, 'GET', '/security-group-rules/%s'
                    % rule['id']).status_code == 404
    _valid(stack.api('DELETE', '/os-security-groups/%s' % group_id, microversion=PROXY),
           'security_groups', 'delete_security_group')
    assert _neutron(stack, 'GET', '/security-groups/%s' % group_id).status_code == 404


@pytest.fixture(scope='module')
def public(stack: Stack, net: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """An external network ``public`` routed to ``sg-net``."""
    external = osc(stack, 'network', 'create', '--external', '--provider-network-type',
                   'flat', '--provider-physical-network', 'public', 'public')
    osc(stack, 'subnet', 'create', '--network', 'public', '--subnet-range', PUBLIC_CIDR,
        '--no-dhcp', 'public-subnet')
    osc(stack, 'router', 'create', 'sg-router')
    osc(stack, 'router', 'set', '--external-gateway', 'public', 'sg-router', fmt_json=False)
    osc(stack, 'router', 'add', 'subnet', 'sg-router', net['subnet_id'], fmt_json=False)
    yield external
    osc(stack, 'router', 'remove', 'subnet', 'sg-router', net['subnet_id'], fmt_json=False)
    osc(stack, 'router', 'delete', 'sg-router', fmt_json=False)
    # Later modules share the stack: with an external network about, openstacksdk's
    # create_server would add a floating IP to every server.
    osc(stack, 'network', 'delete', 'public', fmt_json=False)


def test_floating_ips_through_the_proxy(stack: Stack, server: dict[str, Any],
                                        public: dict[str, Any]) -> None:
    pools = stack.api('GET', '/os-floating-ip-pools', microversion=PROXY).json()
    assert {'name': 'public'} in pools['floating_ip_pools']
    fip = _valid(stack.api('POST', '/os-floating-ips', microversion=PROXY, json={}),
                 'floating_ips', 'create_get_floating_ip')['floating_ip']
    assert fip['pool'] == 'public' and fip['instance_id'] is None
    address = fip['ip']

    added = _action(stack, server['id'], {'addFloatingIp': {'address': address}}, '2.43')
    assert added.status_code == 202, added.text
    port = _port(stack, server['id'])
    in_neutron = _neutron(stack, 'GET', '/floatingips/%s' % fip['id']).json()['floatingip']
    assert in_neutron['port_id'] == port['id']
    listed = _valid(stack.api('GET', '/os-floating-ips', microversion=PROXY),
                    'floating_ips', 'list_floating_ips')
    assert {'id': fip['id'], 'ip': address, 'pool': 'public',
            'fixed_ip': port['fixed_ips'][0]['ip_address'],
            'instance_id': server['id']} in listed['floating_ips']
    addresses = clients.server(stack, server['id'])['addresses']['sg-net']
    assert {a['addr']: a['OS-EXT-IPS:type'] for a in addresses}[address] == 'floating'
    gone = _action(stack, server['id'], {'addFloatingIp': {'address': address}}, '2.44')
    assert gone.status_code == 404

    removed = _action(stack, server['id'], {'removeFloatingIp': {'address': address}},
                      '2.43')
    assert removed.status_code == 202, removed.text
    assert _neutron(stack, 'GET', '/floatingips/%s' % fip['id']).json()[
        'floatingip']['port_id'] is None
    assert stack.api('GET', '/os-floating-ips/%s' % fip['id'],
                     microversion='2.36').status_code == 404
    _valid(stack.api('DELETE', '/os-floating-ips/%s' % fip['id'], microversion=PROXY),
           'floating_ips', 'add_remove_floating_ip')
    assert _neutron(stack, 'GET', '/floatingips/%s' % fip['id']).status_code == 404


def test_networks_proxy(stack: Stack, net: dict[str, Any]) -> None:
    listed = stack.api('GET', '/os-networks', microversion=PROXY).json()['networks']
    mine = next(n for n in listed if n['id'] == net['id'])
    assert mine['label'] == 'sg-net' and mine['cidr'] is None
    shown = stack.api('GET', '/os-networks/%s' % net['id'], microversion=PROXY).json()
    assert shown['network']['label'] == 'sg-net'
    assert stack.api('GET', '/os-networks', microversion='2.36').status_code == 404
    assert stack.api('POST', '/os-networks', json={}).status_code == 410


def _median_ms(call: Any, times: int = 15) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


def test_server_list_of_20_asks_neutron_for_its_groups_in_two_queries(
        stack: Stack, net: dict[str, Any]) -> None:
    """Measured: GET /servers/detail of 20 servers on real ports, and the two Neutron
    queries it makes for their groups (the extra cost of the groups)."""
    quota = stack.api('PUT', '/os-quota-sets/admin', json={'quota_set': {
        'instances': 40, 'cores': 40, 'ram': 40 * 1024}})
    assert quota.status_code == 200, quota.text
    created = stack.api('POST', '/servers', json={'server': {
        'name': 'many', 'imageRef': stack.image_id,
        'flavorRef': clients.flavor_id(stack, 'm1.nano'), 'min_count': 20,
        'networks': [{'uuid': net['id']}], 'return_reservation_id': True}})
    assert created.status_code == 202, created.text
    reservation = created.json()['reservation_id']
    ids = [s['id'] for s in stack.api(
        'GET', '/servers?reservation_id=%s' % reservation).json()['servers']]
    assert len(ids) == 20
    views = clients.wait_settled(stack, ids, timeout=300)
    assert all(v['status'] == 'ACTIVE' for v in views.values()), views
    try:
        detail = stack.api('GET', '/servers/detail?reservation_id=%s' % reservation)
        assert all(s['security_groups'] == [{'name': 'default'}]
                   for s in detail.json()['servers'])
        with_groups = _median_ms(lambda: stack.api(
            'GET', '/servers/detail?reservation_id=%s' % reservation))
        assert stack.neutron is not None
        ports_query = '/ports?' + '&'.join(['device_id=%s' % i for i in ids] +
                                           ['fields=device_id', 'fields=security_groups'])
        group_ids = sorted({g for p in _neutron(stack, 'GET', ports_query).json()['ports']
                            for g in p['security_groups']})
        groups_query = '/security-groups?' + '&'.join(
            ['id=%s' % g for g in group_ids] + ['fields=id', 'fields=name'])
        ports_ms = _median_ms(lambda: _neutron(stack, 'GET', ports_query))
        groups_ms = _median_ms(lambda: _neutron(stack, 'GET', groups_query))
        print('\nGET /servers/detail, 20 servers with ports: median %.1f ms; the Neutron '
              'queries for their security groups: ports %.1f ms + groups %.1f ms' % (
                  with_groups, ports_ms, groups_ms))
    finally:
        for server_id in ids:
            stack.api('DELETE', '/servers/%s' % server_id)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and stack.api(
                'GET', '/servers?reservation_id=%s' % reservation).json()['servers']:
            time.sleep(1)
