"""python-openstackclient against the stack: flavors, servers, compute services."""
from __future__ import annotations

import pytest

from tests.devstack import clients


def test_flavor_create_list_show_delete(stack):
    created = clients.osc(stack, 'flavor', 'create', '--vcpus', '1', '--ram', '256',
                          '--disk', '1', 'ds.small')
    assert created['name'] == 'ds.small'
    assert (created['vcpus'], created['ram'], created['disk']) == (1, 256, 1)
    listed = clients.osc(stack, 'flavor', 'list')
    assert 'ds.small' in [f['Name'] for f in listed]
    shown = clients.osc(stack, 'flavor', 'show', 'ds.small')
    assert shown['id'] == created['id']
    clients.osc(stack, 'flavor', 'delete', 'ds.small', fmt_json=False)
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'flavor', 'show', 'ds.small')
    assert 'ds.small' not in [f['Name'] for f in clients.osc(stack, 'flavor', 'list')]


def test_server_create_list_show_delete(stack):
    created = clients.osc(stack, 'server', 'create', '--image', 'cirros-tiny',
                          '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'osc-vm1')
    assert created['status'] == 'ACTIVE', created
    server_id = created['id']
    assert server_id in [s['ID'] for s in clients.osc(stack, 'server', 'list')]
    shown = clients.osc(stack, 'server', 'show', server_id)
    assert shown['status'] == 'ACTIVE'
    assert shown['OS-EXT-SRV-ATTR:host'] in stack.computes
    assert 'cirros-tiny' in shown['image']
    # The claim made by the scheduler is in Placement, against the chosen host's node.
    allocs = clients.allocations(stack, server_id)
    assert [a['resources'] for a in allocs.values()] == [
        {'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}]

    clients.osc(stack, 'server', 'delete', '--wait', server_id, fmt_json=False)
    assert server_id not in [s['ID'] for s in clients.osc(stack, 'server', 'list')]
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'server', 'show', server_id)
    assert clients.allocations(stack, server_id) == {}


def test_compute_service_list(stack):
    if stack.api('GET', '/os-services').status_code == 404:
        pytest.skip('GET /os-services is not implemented yet (404)')
    services = clients.osc(stack, 'compute', 'service', 'list')
    seen = {(s['Binary'], s['Host']): s for s in services}
    expected = {('nova-conductor', 'controller'), ('nova-scheduler', 'controller')}
    expected |= {('nova-compute', host) for host in stack.computes}
    assert expected <= set(seen), services
    for key in expected:
        assert seen[key]['State'] == 'up', seen[key]
        assert seen[key]['Status'] == 'enabled', seen[key]
