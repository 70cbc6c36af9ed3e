"""python-openstackclient against the stack, for every Compute API resource beyond
flavors and servers' create/delete: keypairs, server properties, tags and actions,
instance actions, resize, snapshots, shelve, migrations, server groups, aggregates,
zones, hypervisors, services, quotas, limits and usage.

It shares the stack of the other client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.devstack import clients, session

# Tags and some server actions need a microversion past 2.1; osc sends what it is told.
MV = ('--os-compute-api-version', '2.latest')


def _osc(stack, *args: str, **kwargs: Any) -> Any:
    return clients.osc(stack, *MV, *args, **kwargs)




@pytest.fixture
def vm(stack) -> Iterator[str]:
    """One ACTIVE server of m1.nano with no network, deleted (with wait) afterwards."""
    created = clients.osc(stack, 'server', 'create', '--image', 'cirros-tiny',
                          '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'osc-res-vm')
    assert created['status'] == 'ACTIVE', created
    yield created['id']
    clients.delete_all(stack, [created['id']])


def test_keypair_create_list_show_delete(stack):
    key = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    path = stack.state_dir + '/osc-key.pub'
    with open(path, 'w') as out:
        out.write(key + '\n')
    created = clients.osc(stack, 'keypair', 'create', '--public-key', path, 'osc-key')
    try:
        assert created['name'] == 'osc-key' and created['fingerprint']
        assert 'osc-key' in [k['Name'] for k in clients.osc(stack, 'keypair', 'list')]
        shown = clients.osc(stack, 'keypair', 'show', 'osc-key')
        assert shown['fingerprint'] == created['fingerprint']
        public = clients.osc(stack, 'keypair', 'show', '--public-key', 'osc-key',
                             fmt_json=False)
        assert public.strip() == key
    finally:
        clients.osc(stack, 'keypair', 'delete', 'osc-key', fmt_json=False)
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'keypair', 'show', 'osc-key')


def test_server_properties_and_tags(stack, vm):
    _osc(stack, 'server', 'set', '--property', 'role=db', '--property', 'tier=1', vm,
         fmt_json=False)
    assert clients.server(stack, vm)['metadata'] == {'role': 'db', 'tier': '1'}
    _osc(stack, 'server', 'unset', '--property', 'tier', vm, fmt_json=False)
    assert clients.server(stack, vm)['metadata'] == {'role': 'db'}

    _osc(stack, 'server', 'set', '--tag', 'blue', '--tag', 'green', vm, fmt_json=False)
    assert sorted(clients.server(stack, vm)['tags']) == ['blue', 'green']
    _osc(stack, 'server', 'unset', '--tag', 'blue', vm, fmt_json=False)
    assert clients.server(stack, vm)['tags'] == ['green']
    found = _osc(stack, 'server', 'list', '--tags', 'green')
    assert [s['ID'] for s in found] == [vm]


def test_server_power_pause_suspend_lock(stack, vm):
    for verb, status in (('stop', 'SHUTOFF'), ('start', 'ACTIVE'), ('reboot', 'ACTIVE'),
                         ('pause', 'PAUSED'), ('unpause', 'ACTIVE'),
                         ('suspend', 'SUSPENDED'), ('resume', 'ACTIVE')):
        _osc(stack, 'server', verb, vm, fmt_json=False)
        clients.wait_status(stack, vm, status)

    _osc(stack, 'server', 'lock', vm, fmt_json=False)
    assert _osc(stack, 'server', 'show', vm)['locked'] is True
    _osc(stack, 'server', 'unlock', vm, fmt_json=False)
    assert _osc(stack, 'server', 'show', vm)['locked'] is False

    # Every action above is an instance action, newest first.
    events = _osc(stack, 'server', 'event', 'list', vm)
    actions = [e['Action'] for e in events]
    for action in ('create', 'stop', 'start', 'reboot', 'pause', 'unpause', 'suspend',
                   'resume', 'lock', 'unlock'):
        assert action in actions, events
    request_id = next(e['Request ID'] for e in events if e['Action'] == 'reboot')
    shown = _osc(stack, 'server', 'event', 'show', vm, request_id)
    assert shown['action'] == 'reboot'
    assert shown['events'], shown


def test_server_console_log(stack, vm):
    out = clients.osc(stack, 'console', 'log', 'show', vm, fmt_json=False)
    assert isinstance(out, str)
    tail = clients.osc(stack, 'console', 'log', 'show', '--lines', '1', vm, fmt_json=False)
    assert len(tail.splitlines()) <= 1


def test_server_resize_confirm_and_migrations(stack, vm):
    _osc(stack, 'server', 'resize', '--flavor', 'm1.tiny', '--wait', vm, fmt_json=False)
    resized = clients.wait_status(stack, vm, 'VERIFY_RESIZE')
    assert resized['flavor']['original_name'] == 'm1.tiny'
    _osc(stack, 'server', 'resize', 'confirm', vm, fmt_json=False)
    confirmed = clients.wait_status(stack, vm, 'ACTIVE')
    assert confirmed['flavor']['original_name'] == 'm1.tiny'
    # The claim now is m1.tiny's, on one host only.
    allocs = clients.allocations(stack, vm)
    assert [a['resources'] for a in allocs.values()] == [
        {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}]

    migrations = _osc(stack, 'server', 'migration', 'list', '--server', vm)
    assert [m['Type'] for m in migrations] == ['resize'], migrations
    assert migrations[0]['Status'] == 'confirmed'
    assert migrations[0]['Old Flavor'] != migrations[0]['New Flavor']
    assert vm in [m['Server UUID'] for m in _osc(stack, 'server', 'migration', 'list')]


def test_server_image_create_then_delete(stack, vm):
    image = _osc(stack, 'server', 'image', 'create', '--name', 'osc-snap', '--wait', vm)
    try:
        assert image['name'] == 'osc-snap'
        shown = clients.osc(stack, 'image', 'show', image['id'])
        assert shown['status'] == 'active', shown
        clients.wait_status(stack, vm, 'ACTIVE')
    finally:
        clients.osc(stack, 'image', 'delete', image['id'], fmt_json=False)
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'image', 'show', image['id'])


def test_server_shelve_unshelve(stack, vm):
    _osc(stack, 'server', 'shelve', '--offload', '--wait', vm, fmt_json=False)
    shelved = clients.wait_status(stack, vm, 'SHELVED_OFFLOADED')
    assert not shelved['OS-EXT-SRV-ATTR:host']
    assert clients.allocations(stack, vm) == {}
    _osc(stack, 'server', 'unshelve', '--wait', vm, fmt_json=False)
    back = clients.wait_status(stack, vm, 'ACTIVE')
    assert back['OS-EXT-SRV-ATTR:host'] in stack.computes
    assert len(clients.allocations(stack, vm)) == 1


def test_server_group_create_list_show_delete(stack):
    created = _osc(stack, 'server', 'group', 'create', '--policy', 'anti-affinity',
                   'osc-group')
    try:
        assert created['policy'] == 'anti-affinity'
        assert created['id'] in [g['ID'] for g in _osc(stack, 'server', 'group', 'list')]
        shown = _osc(stack, 'server', 'group', 'show', created['id'])
        assert shown['name'] == 'osc-group' and shown['members'] in ([], '')
    finally:
        _osc(stack, 'server', 'group', 'delete', created['id'], fmt_json=False)
    with pytest.raises(clients.CommandFailed):
        _osc(stack, 'server', 'group', 'show', created['id'])


def test_aggregate_and_availability_zones(stack):
    host = stack.computes[0]
    created = clients.osc(stack, 'aggregate', 'create', 'osc-agg')
    try:
        clients.osc(stack, 'aggregate', 'set', '--zone', 'osc-zone', '--property', 'ssd=true',
                    'osc-agg', fmt_json=False)
        added = clients.osc(stack, 'aggregate', 'add', 'host', 'osc-agg', host)
        assert added['hosts'] == [host]
        shown = clients.osc(stack, 'aggregate', 'show', 'osc-agg')
        assert shown['id'] == created['id']
        assert shown['availability_zone'] == 'osc-zone'
        assert shown['properties'] == {'ssd': 'true'}
        zones = clients.osc(stack, 'availability', 'zone', 'list', '--compute', '--long')
        assert ('osc-zone', host) in {(z['Zone Name'], z['Host Name']) for z in zones}
        removed = clients.osc(stack, 'aggregate', 'remove', 'host', 'osc-agg', host)
        assert removed['hosts'] == []
    finally:
        clients.osc(stack, 'aggregate', 'delete', 'osc-agg', fmt_json=False)
    assert 'osc-agg' not in [a['Name'] for a in clients.osc(stack, 'aggregate', 'list')]
    zones = clients.osc(stack, 'availability', 'zone', 'list', '--compute')
    assert 'osc-zone' not in [z['Zone Name'] for z in zones]


def test_hypervisor_list_show(stack):
    listed = {h['Hypervisor Hostname']: h for h in clients.osc(stack, 'hypervisor', 'list')}
    assert set(stack.computes) <= set(listed)
    shown = clients.osc(stack, 'hypervisor', 'show', listed[stack.computes[0]]['ID'])
    assert shown['hypervisor_hostname'] == stack.computes[0]
    assert shown['state'] == 'up' and shown['status'] == 'enabled'


def test_compute_service_disable_enable(stack):
    host = stack.computes[1]
    disabled = _osc(stack, 'compute', 'service', 'set', '--disable', '--disable-reason',
                    'osc test', host, 'nova-compute', fmt_json=False)
    assert disabled is not None
    try:
        services = _osc(stack, 'compute', 'service', 'list', '--host', host, '--long')
        assert [(s['Binary'], s['Status'], s['Disabled Reason']) for s in services] == [
            ('nova-compute', 'disabled', 'osc test')]
    finally:
        _osc(stack, 'compute', 'service', 'set', '--enable', host, 'nova-compute',
             fmt_json=False)
    services = _osc(stack, 'compute', 'service', 'list', '--host', host)
    assert [s['Status'] for s in services] == ['enabled']


# openstackclient finds a project by name in Keystone, and asks Cinder for limits when the
# catalog does not say there is none: without Keystone (the shared noauth2 stack) neither
# works, so these commands run against a stack of their own behind a real Keystone, after
# every test of the shared one.
@pytest.fixture(scope='module')
def keystone_stack(tmp_path_factory) -> Iterator:
    made = session.new_stack(str(tmp_path_factory.mktemp('devstack-osc-keystone')),
                             auth='keystone')
    made.up()
    try:
        yield made
    finally:
        left = made.down(check=False)
        assert not left, 'the keystone stack left things behind: %s' % left


def test_quota_show_set(keystone_stack):
    project = 'alpha'
    before = _quota(clients.osc(keystone_stack, 'quota', 'show', '--compute', project),
                    'instances')
    try:
        clients.osc(keystone_stack, 'quota', 'set', '--instances', '7', project,
                    fmt_json=False)
        after = clients.osc(keystone_stack, 'quota', 'show', '--compute', project)
        assert _quota(after, 'instances') == 7
    finally:
        clients.osc(keystone_stack, 'quota', 'delete', '--compute', project,
                    fmt_json=False)
    assert _quota(clients.osc(keystone_stack, 'quota', 'show', '--compute', project),
                  'instances') == before


def _quota(shown: Any, name: str) -> int:
    """A quota from ``quota show`` output, a list of rows in newer osc, a dict in older."""
    if isinstance(shown, dict):
        return int(shown[name])
    return int(next(row['Limit'] for row in shown if row['Resource'] == name))


def test_limits_show_absolute_and_usage(keystone_stack):
    created = clients.osc(keystone_stack, 'server', 'create', '--image', 'cirros-tiny',
                          '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'osc-usage')
    try:
        assert created['status'] == 'ACTIVE', created
        limits = {row['Name']: row['Value']
                  for row in clients.osc(keystone_stack, 'limits', 'show', '--absolute')}
        # osc names them as the API does (maxTotalInstances) or as openstacksdk does.
        assert int(limits.get('maxTotalInstances', limits.get('max_total_instances'))) >= 1
        assert int(limits.get('totalInstancesUsed',
                              limits.get('total_instances_used'))) == 1, limits

        shown = clients.osc(keystone_stack, 'usage', 'show')
        assert [s['instance_id'] for s in shown['Servers']] == [created['id']], shown
        assert shown['CPU Hours'] > 0
        listed = clients.osc(keystone_stack, 'usage', 'list')
        assert shown['Project'] in [row['Project'] for row in listed]
        by_name = clients.osc(keystone_stack, 'usage', 'show', '--project', 'admin')
        assert by_name['Project'] == shown['Project']
    finally:
        clients.delete_all(keystone_stack, [created['id']])
