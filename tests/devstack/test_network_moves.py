"""A server's port follows it: cold migration, resize and its revert, and evacuation of
a server whose host is down move the port's ``binding:host_id`` (the real Neutron)."""
from __future__ import annotations

from typing import Any

import pytest

from tests.devstack import clients, network
from tests.devstack.clients import osc
from tests.devstack.harness import Stack

STACK = {'network': True}


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'moves-net', '10.40.0.0/24')


def _binding(stack: Stack, server_id: str) -> str:
    assert stack.neutron is not None
    ports = stack.neutron.api('GET', '/ports?device_id=%s' % server_id).json()['ports']
    assert len(ports) == 1, ports
    assert ports[0]['binding:vif_type'] == 'ovs', ports[0]
    return ports[0]['binding:host_id']


def _host(stack: Stack, server_id: str) -> str:
    return clients.server(stack, server_id)['OS-EXT-SRV-ATTR:host']


def _wait_status(stack: Stack, server_id: str, status: str) -> dict[str, Any]:
    return stack.wait_for(
        lambda: (lambda v: v if v['status'] == status else None)(
            clients.server(stack, server_id)), 120, 'server %s %s' % (server_id, status))


def _boot_on(stack: Stack, net: dict[str, Any], name: str, host: str) -> str:
    sid = clients.boot(stack, name, networks=[{'uuid': net['id']}], host=host)
    assert clients.wait_settled(stack, [sid])[sid]['status'] == 'ACTIVE'
    return sid


def test_cold_migrate_and_resize_revert_move_the_binding(stack: Stack,
                                                         net: dict[str, Any]) -> None:
    sid = _boot_on(stack, net, 'mover', 'hostA')
    assert _binding(stack, sid) == 'hostA'

    osc(stack, 'server', 'migrate', '--wait', sid, fmt_json=False)
    _wait_status(stack, sid, 'VERIFY_RESIZE')
    assert _host(stack, sid) == 'hostB'
    assert _binding(stack, sid) == 'hostB'
    osc(stack, 'server', 'migrate', 'confirm', sid, fmt_json=False)
    _wait_status(stack, sid, 'ACTIVE')
    assert _binding(stack, sid) == 'hostB'

    osc(stack, 'server', 'resize', '--flavor', 'm1.tiny', '--wait', sid, fmt_json=False)
    _wait_status(stack, sid, 'VERIFY_RESIZE')
    assert _host(stack, sid) == 'hostA'
    assert _binding(stack, sid) == 'hostA'
    osc(stack, 'server', 'resize', 'revert', sid, fmt_json=False)
    _wait_status(stack, sid, 'ACTIVE')
    assert _host(stack, sid) == 'hostB'
    assert _binding(stack, sid) == 'hostB'
    # The server view's addresses came through the moves.
    assert list(clients.server(stack, sid)['addresses']) == ['moves-net']
    clients.delete_all(stack, [sid])


def test_evacuate_rebinds_the_port_to_the_new_host(stack: Stack,
                                                   net: dict[str, Any]) -> None:
    sid = _boot_on(stack, net, 'evacuee', 'hostA')
    assert _binding(stack, sid) == 'hostA'
    stack.kill('compute-hostA')
    try:
        stack.wait_for(lambda: any(
            s['host'] == 'hostA' and s['state'] == 'down'
            for s in stack.api('GET', '/os-services').json()['services']), 60,
            'hostA seen down')
        resp = stack.api('POST', '/servers/%s/action' % sid, json={'evacuate': {}})
        assert resp.status_code == 200, resp.text
        _wait_status(stack, sid, 'ACTIVE')
        assert _host(stack, sid) == 'hostB'
        assert _binding(stack, sid) == 'hostB'
    finally:
        stack.start('compute-hostA')
    clients.delete_all(stack, [sid])


def _port_of(stack: Stack, server_id: str) -> dict[str, Any]:
    assert stack.neutron is not None
    ports = stack.neutron.api('GET', '/ports?device_id=%s' % server_id).json()['ports']
    assert len(ports) == 1, ports
    return ports[0]


def test_shelve_offload_unbinds_unshelve_rebinds_and_rebuild_keeps_the_port(
        stack: Stack, net: dict[str, Any]) -> None:
    sid = _boot_on(stack, net, 'shelver', 'hostA')
    port = _port_of(stack, sid)
    osc(stack, 'server', 'rebuild', '--image', 'cirros-tiny', '--wait', sid, fmt_json=False)
    assert _port_of(stack, sid)['id'] == port['id']
    assert _binding(stack, sid) == 'hostA'

    osc(stack, 'server', 'shelve', '--offload', '--wait', sid, fmt_json=False)
    _wait_status(stack, sid, 'SHELVED_OFFLOADED')
    offloaded = _port_of(stack, sid)
    assert offloaded['id'] == port['id'] and not offloaded['binding:host_id']
    assert list(clients.server(stack, sid)['addresses']) == ['moves-net']

    osc(stack, 'server', 'unshelve', '--wait', sid, fmt_json=False)
    _wait_status(stack, sid, 'ACTIVE')
    assert _port_of(stack, sid)['id'] == port['id']
    assert _binding(stack, sid) == _host(stack, sid)
    clients.delete_all(stack, [sid])
