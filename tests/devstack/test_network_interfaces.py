"""A server's interfaces attached and detached against the real Neutron (ML2/OVN):
openstackclient's ``server add/remove port|network``, os-interface answering as Nova
(and as tempest's response schemas say), and the fixed-IP actions of 2.43.

The computes run the fake driver: the ports, their binding, their addresses and their
release are what is checked.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest
from tempest.lib.common import rest_client

from tests.devstack import clients, network
from tests.devstack.clients import osc
from tests.devstack.harness import Stack
from tests.functional.test_response_schemas import schema

STACK = {'network': True}
NET = 'iface-net'
CIDR = '10.30.0.0/24'


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, NET, CIDR)


@pytest.fixture(scope='module')
def server(stack: Stack, net: dict[str, Any]) -> Iterator[dict[str, Any]]:
    created = osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor',
                  'm1.nano', '--network', NET, '--wait', 'iface-vm')
    assert created['status'] == 'ACTIVE'
    yield created
    osc(stack, 'server', 'delete', '--wait', created['id'], fmt_json=False)
    assert network.ports_of(stack, created['id']) == []


# -- helpers ----------------------------------------------------------------------------


class _Headers(dict):
    """Response headers as tempest's RestClient hands them to its validator."""

    status: int


def _checked(resp: Any, name: str, version: str) -> Any:
    """The body, validated against tempest's ``interfaces`` schema ``name``."""
    headers = _Headers({k.lower(): v for k, v in resp.headers.items()})
    headers['status'] = str(resp.status_code)
    headers.status = resp.status_code
    body = resp.json() if resp.content else ''
    rest_client.RestClient.validate_response(schema('interfaces', name, version), headers,
                                             body)
    return body


def _interfaces(stack: Stack, server_id: str, version: str = '2.70') -> list[dict]:
    resp = stack.api('GET', '/servers/%s/os-interface' % server_id, microversion=version)
    return _checked(resp, 'list_interfaces', version)['interfaceAttachments']


def _attach(stack: Stack, server_id: str, version: str = '2.70',
            **attachment: Any) -> Any:
    return stack.api('POST', '/servers/%s/os-interface' % server_id, microversion=version,
                     json={'interfaceAttachment': attachment})


def _addresses(stack: Stack, server_id: str) -> list[str]:
    resp = stack.api('GET', '/servers/%s/ips' % server_id)
    resp.raise_for_status()
    return sorted(a['addr'] for addrs in resp.json()['addresses'].values() for a in addrs)


def _assert_matches_neutron(stack: Stack, server_id: str) -> None:
    """os-interface, openstackclient's port list and the server's addresses say what
    Neutron says of the server's ports."""
    ports = {p['id']: p for p in network.ports_of(stack, server_id)}
    interfaces = {i['port_id']: i for i in _interfaces(stack, server_id)}
    assert set(interfaces) == set(ports)
    for port_id, iface in interfaces.items():
        port = ports[port_id]
        assert (iface['net_id'], iface['mac_addr'], iface['port_state']) == \
            (port['network_id'], port['mac_address'], port['status'])
        assert iface['fixed_ips'] == [{'subnet_id': f['subnet_id'],
                                       'ip_address': f['ip_address']}
                                      for f in port['fixed_ips']]
    assert {p['ID'] for p in osc(stack, 'port', 'list', '--server', server_id)} == \
        set(ports)
    assert _addresses(stack, server_id) == sorted(
        f['ip_address'] for p in ports.values() for f in p['fixed_ips'])


def _wait(stack: Stack, predicate: Any, what: str) -> Any:
    return stack.wait_for(predicate, 60, what, interval=0.5)


# -- tests --------------------------------------------------------------------------------

def test_the_boot_port_is_listed_as_neutron_has_it(stack: Stack,
                                                   server: dict[str, Any]) -> None:
    (port,) = network.ports_of(stack, server['id'])
    assert port['binding:host_id'] == server['OS-EXT-SRV-ATTR:host']
    _assert_matches_neutron(stack, server['id'])
    shown = stack.api('GET', '/servers/%s/os-interface/%s' % (server['id'], port['id']),
                      microversion='2.1')
    assert _checked(shown, 'get_create_interfaces', '2.1')['interfaceAttachment'][
        'port_id'] == port['id']


def test_add_port_binds_the_users_port_and_remove_port_unbinds_it(
        stack: Stack, server: dict[str, Any]) -> None:
    made = osc(stack, 'port', 'create', '--network', NET, 'iface-user-port')
    osc(stack, 'server', 'add', 'port', server['id'], made['id'], fmt_json=False)
    bound = network.port(stack, made['id'])
    assert bound is not None
    assert (bound['device_id'], bound['binding:host_id'], bound['device_owner']) == \
        (server['id'], server['OS-EXT-SRV-ATTR:host'], 'compute:nova')
    assert bound['binding:vif_type'] == 'ovs'
    _assert_matches_neutron(stack, server['id'])

    osc(stack, 'server', 'remove', 'port', server['id'], made['id'], fmt_json=False)
    _wait(stack, lambda: made['id'] not in {i['port_id'] for i in
                                            _interfaces(stack, server['id'])}
          and len(_addresses(stack, server['id'])) == 1, 'the port detached')
    kept = network.port(stack, made['id'])
    assert kept is not None, 'the user\'s port was deleted by the detach'
    assert kept['device_id'] == '' and kept['binding:host_id'] in ('', None)
    _assert_matches_neutron(stack, server['id'])
    osc(stack, 'port', 'delete', made['id'], fmt_json=False)


def test_add_network_makes_a_port_and_remove_deletes_it(stack: Stack, net: dict[str, Any],
                                                        server: dict[str, Any]) -> None:
    before = {p['id'] for p in network.ports_of(stack, server['id'])}
    osc(stack, 'server', 'add', 'network', server['id'], NET, fmt_json=False)
    (made,) = [p for p in network.ports_of(stack, server['id']) if p['id'] not in before]
    assert made['binding:host_id'] == server['OS-EXT-SRV-ATTR:host']
    _assert_matches_neutron(stack, server['id'])

    # With a fixed IP and a tag (2.49), shown from 2.70.
    resp = _attach(stack, server['id'], net_id=net['id'],
                   fixed_ips=[{'ip_address': '10.30.0.200'}], tag='nic-b')
    tagged = _checked(resp, 'get_create_interfaces', '2.70')['interfaceAttachment']
    assert tagged['fixed_ips'][0]['ip_address'] == '10.30.0.200' and tagged['tag'] == 'nic-b'
    assert {i['port_id']: i['tag'] for i in _interfaces(stack, server['id'])}[
        tagged['port_id']] == 'nic-b'
    _assert_matches_neutron(stack, server['id'])

    for port_id in (made['id'], tagged['port_id']):
        resp = stack.api('DELETE', '/servers/%s/os-interface/%s' % (server['id'], port_id))
        _checked(resp, 'delete_interface', '2.1')
        _wait(stack, lambda pid=port_id: network.port(stack, pid) is None, 'port %s deleted'
              % port_id)
    _wait(stack, lambda: {i['port_id'] for i in _interfaces(stack, server['id'])} == before,
          'the interfaces gone')
    _assert_matches_neutron(stack, server['id'])


def test_refusals_answer_novas_codes(stack: Stack, net: dict[str, Any],
                                     server: dict[str, Any]) -> None:
    missing = '00000000-0000-4000-8000-000000000002'
    (boot,) = network.ports_of(stack, server['id'])
    boot_ip = boot['fixed_ips'][0]['ip_address']
    assert _attach(stack, server['id'], port_id=boot['id']).status_code == 409
    assert _attach(stack, server['id'], port_id=missing).status_code == 404
    assert _attach(stack, server['id'], net_id=missing).status_code == 404
    assert _attach(stack, server['id'], net_id=net['id'],
                   fixed_ips=[{'ip_address': boot_ip}]).status_code == 409
    assert _attach(stack, server['id'], net_id=net['id'],
                   port_id=boot['id']).status_code == 400
    assert _attach(stack, server['id'], '2.48', net_id=net['id'],
                   tag='early').status_code == 400
    other = osc(stack, 'port', 'create', '--network', NET, 'iface-other-port')
    path = '/servers/%s/os-interface/%s' % (server['id'], other['id'])
    assert stack.api('GET', path).status_code == 404
    assert stack.api('DELETE', path).status_code == 404
    osc(stack, 'port', 'delete', other['id'], fmt_json=False)
    # Nothing was attached by any of them.
    assert [p['id'] for p in network.ports_of(stack, server['id'])] == [boot['id']]


def test_fixed_ips_at_2_43(stack: Stack, net: dict[str, Any],
                           server: dict[str, Any]) -> None:
    action = '/servers/%s/action' % server['id']
    (boot,) = network.ports_of(stack, server['id'])
    first = boot['fixed_ips'][0]['ip_address']
    resp = stack.api('POST', action, microversion='2.43',
                     json={'addFixedIp': {'networkId': net['id']}})
    assert resp.status_code == 202, resp.text
    _wait(stack, lambda: len(_addresses(stack, server['id'])) == 2, 'a second address')
    (port,) = network.ports_of(stack, server['id'])
    assert port['id'] == boot['id'] and len(port['fixed_ips']) == 2
    added = [f['ip_address'] for f in port['fixed_ips'] if f['ip_address'] != first][0]
    assert ipaddress.ip_address(added) in ipaddress.ip_network(CIDR)
    _assert_matches_neutron(stack, server['id'])

    resp = stack.api('POST', action, microversion='2.43',
                     json={'removeFixedIp': {'address': added}})
    assert resp.status_code == 202, resp.text
    _wait(stack, lambda: _addresses(stack, server['id']) == [first], 'the address removed')
    _assert_matches_neutron(stack, server['id'])

    resp = stack.api('POST', action, microversion='2.43',
                     json={'removeFixedIp': {'address': '10.30.0.250'}})
    assert resp.status_code == 400 and '10.30.0.250' in resp.text
    resp = stack.api('POST', action, microversion='2.44',
                     json={'addFixedIp': {'networkId': net['id']}})
    assert resp.status_code == 404

    actions = {a['action'] for a in stack.api(
        'GET', '/servers/%s/os-instance-actions' % server['id']).json()['instanceActions']}
    assert {'attach_interface', 'detach_interface', 'add_fixed_ip',
            'remove_fixed_ip'} <= actions
    assert clients.server(stack, server['id'])['status'] == 'ACTIVE'
