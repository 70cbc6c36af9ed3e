"""Neutron failing under novalite: builds end ACTIVE or ERROR with a fault that names
Neutron, deletes go on, and once Neutron is back no port or allocation is left for a
server that is in ERROR or deleted (the computes' port audit, every 5 s here)."""
from __future__ import annotations

import time
from typing import Any

import pytest

from tests.devstack import clients, network
from tests.devstack.harness import Stack

STACK = {'network': True}


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'faults-net', '10.30.0.0/24')


def _stop_neutron(stack: Stack) -> None:
    assert stack.neutron is not None
    stack.neutron.api_process.stop()


def _start_neutron(stack: Stack) -> None:
    neutron = stack.neutron
    assert neutron is not None
    neutron.api_process.start()
    assert neutron.api_process.pid is not None
    neutron.ledger.pid('neutron-api', neutron.api_process.pid)
    neutron.wait_ready(120)


def _ports_of(stack: Stack, server_ids: list[str]) -> dict[str, list[str]]:
    assert stack.neutron is not None
    ports = stack.neutron.api('GET', '/ports').json()['ports']
    found: dict[str, list[str]] = {}
    for port in ports:
        if port['device_id'] in server_ids:
            found.setdefault(port['device_id'], []).append(port['id'])
    return found


def _boot(stack: Stack, net: dict[str, Any], name: str) -> str:
    return clients.boot(stack, name, networks=[{'uuid': net['id']}])


def test_neutron_stopped_during_a_storm_of_boots(stack: Stack, net: dict[str, Any]) -> None:
    ids = [_boot(stack, net, 'storm-%d' % n) for n in range(10)]
    _stop_neutron(stack)
    try:
        views = clients.wait_settled(stack, ids, timeout=180)
    finally:
        _start_neutron(stack)
    states = {sid: v['OS-EXT-STS:vm_state'] for sid, v in views.items()}
    assert set(states.values()) <= {'active', 'error'}, states
    failed = [sid for sid, state in states.items() if state == 'error']
    print('\n%d of 10 boots failed while Neutron was down' % len(failed))
    for sid in failed:
        fault = views[sid].get('fault') or {}
        assert 'Neutron' in fault.get('message', '') + fault.get('details', ''), fault
        assert clients.allocations(stack, sid) == {}
    # The port audit releases what the failed builds could not.
    stack.wait_for(lambda: not _ports_of(stack, failed), 60, 'ports of failed builds gone')
    active = [sid for sid, state in states.items() if state == 'active']
    for sid in active:
        assert len(_ports_of(stack, [sid]).get(sid, [])) == 1
    clients.delete_all(stack, ids)
    stack.wait_for(lambda: not _ports_of(stack, ids), 60, 'ports of deleted servers gone')


def test_delete_while_neutron_is_down_then_ports_are_cleaned_up(
        stack: Stack, net: dict[str, Any]) -> None:
    ids = [_boot(stack, net, 'down-%d' % n) for n in range(2)]
    views = clients.wait_settled(stack, ids)
    assert all(v['status'] == 'ACTIVE' for v in views.values()), views
    assert len(_ports_of(stack, ids)) == 2
    _stop_neutron(stack)
    try:
        started = time.monotonic()
        clients.delete_all(stack, ids)
        print('\ndeletes with Neutron down took %.1f s' % (time.monotonic() - started))
        for sid in ids:
            assert clients.allocations(stack, sid) == {}
    finally:
        _start_neutron(stack)
    stack.wait_for(lambda: not _ports_of(stack, ids), 60, 'ports of deleted servers gone')
