"""openstacksdk's compute proxy against the stack, for every Compute API resource beyond
flavors and servers' create/delete: keypairs, server metadata, tags and actions, console
output, instance actions, diagnostics, migrations, server groups, aggregates, zones,
hypervisors, services, limits and quota sets.

It shares the stack of the other client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from openstack import exceptions as sdk_exc

from tests.devstack import clients


@pytest.fixture(scope='module')
def conn(stack):
    conn = clients.sdk(stack)
    yield conn
    conn.close()


@pytest.fixture
def vm(stack, conn) -> Iterator:
    """One ACTIVE server of m1.nano with no network, deleted (with wait) afterwards."""
    image = conn.image.find_image('cirros-tiny', ignore_missing=False)
    flavor = conn.compute.find_flavor('m1.nano', ignore_missing=False)
    created = conn.compute.create_server(name='sdk-res-vm', image_id=image.id,
                                         flavor_id=flavor.id, networks='none')
    try:
        yield conn.compute.wait_for_server(created, status='ACTIVE', wait=120)
    finally:
        conn.compute.delete_server(created)
        conn.compute.wait_for_delete(created, wait=120)


def _settle(conn, server, status: str, timeout: float = 120):
    """Wait for ``status`` with no task running (wait_for_server ignores the task)."""
    deadline = time.monotonic() + timeout
    while True:
        got = conn.compute.get_server(server.id)
        if got.status == status and not got.task_state:
            return got
        assert time.monotonic() < deadline, (got.status, got.task_state, status)
        time.sleep(0.5)


def test_keypairs(conn):
    public = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    created = conn.compute.create_keypair(name='sdk-key', public_key=public)
    try:
        assert created.fingerprint
        assert 'sdk-key' in [k.name for k in conn.compute.keypairs()]
        got = conn.compute.get_keypair('sdk-key')
        assert (got.public_key, got.fingerprint) == (public, created.fingerprint)
    finally:
        conn.compute.delete_keypair('sdk-key')
    with pytest.raises(sdk_exc.NotFoundException):
        conn.compute.get_keypair('sdk-key')


def test_server_metadata_and_tags(conn, vm):
    conn.compute.set_server_metadata(vm, role='db', tier='1')
    assert conn.compute.get_server_metadata(vm).metadata == {'role': 'db', 'tier': '1'}
    conn.compute.delete_server_metadata(vm, ['tier'])
    assert conn.compute.get_server_metadata(vm).metadata == {'role': 'db'}

    conn.compute.add_tag_to_server(vm, 'blue')
    conn.compute.add_tag_to_server(vm, 'green')
    assert sorted(conn.compute.get_server(vm.id).tags) == ['blue', 'green']
    conn.compute.remove_tag_from_server(vm, 'blue')
    assert conn.compute.get_server(vm.id).tags == ['green']
    assert [s.id for s in conn.compute.servers(tags='green')] == [vm.id]


def test_server_actions_console_and_instance_actions(conn, vm):
    conn.compute.stop_server(vm)
    _settle(conn, vm, 'SHUTOFF')
    conn.compute.start_server(vm)
    _settle(conn, vm, 'ACTIVE')
    conn.compute.reboot_server(vm, 'SOFT')
    _settle(conn, vm, 'ACTIVE')
    conn.compute.pause_server(vm)
    _settle(conn, vm, 'PAUSED')
    conn.compute.unpause_server(vm)
    _settle(conn, vm, 'ACTIVE')
    conn.compute.lock_server(vm)
    assert conn.compute.get_server(vm.id).is_locked is True
    conn.compute.unlock_server(vm)
    assert conn.compute.get_server(vm.id).is_locked is False

    output = conn.compute.get_server_console_output(vm)
    assert isinstance(output['output'], str)

    actions = list(conn.compute.server_actions(vm))
    names = [a.action for a in actions]
    for name in ('create', 'stop', 'start', 'reboot', 'pause', 'unpause', 'lock', 'unlock'):
        assert name in names, names
    reboot = next(a for a in actions if a.action == 'reboot')
    got = conn.compute.get_server_action(reboot.request_id, vm)
    assert got.action == 'reboot' and got.events


def test_server_diagnostics(conn, vm):
    diagnostics = conn.compute.get_server_diagnostics(vm)
    assert diagnostics.state == 'running'
    assert diagnostics.driver


def test_resize_and_migrations(conn, vm):
    tiny = conn.compute.find_flavor('m1.tiny', ignore_missing=False)
    conn.compute.resize_server(vm, tiny.id)
    _settle(conn, vm, 'VERIFY_RESIZE')
    conn.compute.confirm_server_resize(vm)
    assert _settle(conn, vm, 'ACTIVE').flavor.name == 'm1.tiny'
    mine = [m for m in conn.compute.migrations() if m.server_id == vm.id]
    assert [(m.migration_type, m.status) for m in mine] == [('resize', 'confirmed')]


def test_server_groups(conn):
    group = conn.compute.create_server_group(name='sdk-group', policy='affinity')
    try:
        assert group.policy == 'affinity'
        assert group.id in [g.id for g in conn.compute.server_groups()]
        assert conn.compute.get_server_group(group.id).name == 'sdk-group'
    finally:
        conn.compute.delete_server_group(group)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.compute.get_server_group(group.id)


def test_aggregates_and_availability_zones(stack, conn):
    host = stack.computes[0]
    aggregate = conn.compute.create_aggregate(name='sdk-agg', availability_zone='sdk-zone')
    try:
        conn.compute.add_host_to_aggregate(aggregate, host)
        conn.compute.set_aggregate_metadata(aggregate, {'ssd': 'true'})
        got = conn.compute.get_aggregate(aggregate.id)
        assert got.hosts == [host]
        assert got.metadata == {'ssd': 'true', 'availability_zone': 'sdk-zone'}
        zones = {z.name: z for z in conn.compute.availability_zones(details=True)}
        assert zones['sdk-zone'].state['available'] is True
        assert host in zones['sdk-zone'].hosts
        conn.compute.remove_host_from_aggregate(aggregate, host)
        assert conn.compute.get_aggregate(aggregate.id).hosts == []
    finally:
        conn.compute.delete_aggregate(aggregate)
    assert 'sdk-agg' not in [a.name for a in conn.compute.aggregates()]
    assert 'sdk-zone' not in [z.name for z in conn.compute.availability_zones()]


def test_hypervisors(stack, conn):
    listed = {h.name: h for h in conn.compute.hypervisors(details=True)}
    assert set(stack.computes) <= set(listed)
    got = conn.compute.get_hypervisor(listed[stack.computes[0]].id)
    assert got.name == stack.computes[0]
    assert (got.state, got.status) == ('up', 'enabled')


def test_services_disable_enable(stack, conn):
    host = stack.computes[1]
    service = next(s for s in conn.compute.services()
                   if s.host == host and s.binary == 'nova-compute')
    assert (service.state, service.status) == ('up', 'enabled')
    try:
        disabled = conn.compute.disable_service(service, host, 'nova-compute',
                                                disabled_reason='sdk test')
        assert disabled.status == 'disabled'
        again = next(s for s in conn.compute.services() if s.id == service.id)
        assert (again.status, again.disabled_reason) == ('disabled', 'sdk test')
    finally:
        conn.compute.enable_service(service, host, 'nova-compute')
    again = next(s for s in conn.compute.services() if s.id == service.id)
    assert again.status == 'enabled'


def test_limits(conn):
    limits = conn.compute.get_limits()
    assert limits.absolute.instances >= 1
    assert limits.absolute.instances_used >= 0


def test_quota_sets(conn):
    project = 'sdk-project'
    before = conn.compute.get_quota_set(project)
    try:
        conn.compute.update_quota_set(project, instances=7, cores=14)
        got = conn.compute.get_quota_set(project)
        assert (got.instances, got.cores) == (7, 14)
        used = conn.compute.get_quota_set(project, usage=True)
        assert used.usage['instances'] == 0
    finally:
        conn.compute.revert_quota_set(project)
    assert conn.compute.get_quota_set(project).instances == before.instances
