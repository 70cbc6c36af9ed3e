"""Scheduling on four simulated libvirt hosts: weighers, server groups, reschedules to an
alternate, orphan allocations and unknown guests.

Every host is the same (4 CPUs, 8 GiB), so where servers land is decided by the weighers
and filters alone.
"""
from __future__ import annotations

import collections
import uuid

import libvirt
import pytest
import requests

from novalite import context as nl_context
from novalite import objects
from novalite.compute import guest_audit
from novalite.conf import CONF
from tests.functional import libvirt_stack

VERSION = '2.64'  # server group ``policy``; also carries the 2.47 server view
HOSTS = {'s1': 4, 's2': 4, 's3': 4, 's4': 4}
STACKING = ('ram_weight_multiplier', 'cpu_weight_multiplier', 'disk_weight_multiplier')


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    overrides = {('quota', 'instances'): 100, ('quota', 'cores'): 200,
                 ('quota', 'ram'): 1024 * 1024, ('quota', 'server_group_members'): 50}
    with libvirt_stack.running(tmp_path_factory, 'sched-stack', HOSTS,
                               overrides=overrides) as stack:
        yield stack


@pytest.fixture(scope='module')
def flavor(stack):
    return stack.create_flavor('sched.small', ram=256)


@pytest.fixture
def nothing_left(stack):
    """Each test starts and ends with no server and no usage on any host."""
    yield
    servers = stack.request('GET', '/servers').json()['servers']
    stack.delete_all([s['id'] for s in servers])
    for host in HOSTS:
        assert stack.usages(host) == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}, host
        assert stack.driver(host).list_instance_uuids() == []


def _boot_many(stack, flavor, count, name='many', hints=None):
    """``count`` servers in one request; :returns: them once all are ACTIVE or ERROR."""
    body = stack.boot(flavor, name, hints=hints, min_count=count, max_count=count,
                      return_reservation_id=True)
    reservation = body['reservation_id']
    servers = stack.request('GET', '/servers/detail?reservation_id=%s' % reservation,
                            version=VERSION).json()['servers']
    assert len(servers) == count
    return [stack.wait_for_status(s['id'], ('ACTIVE', 'ERROR'), version=VERSION)
            for s in servers]


def _hosts(servers):
    return collections.Counter(s['OS-EXT-SRV-ATTR:host'] for s in servers)


def _group(stack, policy):
    resp = stack.request('POST', '/os-server-groups', version=VERSION, json={
        'server_group': {'name': 'g-' + policy, 'policy': policy}})
    assert resp.status_code == 200, resp.text
    return resp.json()['server_group']['id']


def _allocated_on(stack, server_id):
    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    names = {stack.provider(h)['uuid']: h for h in HOSTS}
    return [names[rp] for rp in allocations]


def test_twenty_servers_spread_evenly_over_four_hosts(stack, flavor, nothing_left):
    servers = _boot_many(stack, flavor, 20, name='spread')
    assert {s['status'] for s in servers} == {'ACTIVE'}
    assert _hosts(servers) == {host: 5 for host in HOSTS}
    for host in HOSTS:
        assert stack.usages(host) == {'VCPU': 5, 'MEMORY_MB': 5 * 256, 'DISK_GB': 5}
        assert len(stack.driver(host).list_instance_uuids()) == 5
    for server in servers:
        assert _allocated_on(stack, server['id']) == [server['OS-EXT-SRV-ATTR:host']]


def test_negative_multipliers_stack_servers_on_one_host(stack, flavor, nothing_left):
    for name in STACKING:
        CONF.set_override(name, -1.0, group='filter_scheduler')
    # Building servers count as I/O: that weigher would spread them again.
    CONF.set_override('io_ops_weight_multiplier', 0.0, group='filter_scheduler')
    try:
        servers = _boot_many(stack, flavor, 6, name='stack')
    finally:
        for name in STACKING + ('io_ops_weight_multiplier',):
            CONF.clear_override(name, group='filter_scheduler')
    assert {s['status'] for s in servers} == {'ACTIVE'}
    assert list(_hosts(servers).values()) == [6]


def test_affinity_group_lands_together(stack, flavor, nothing_left):
    group = _group(stack, 'affinity')
    servers = _boot_many(stack, flavor, 3, name='aff', hints={'group': group})
    assert {s['status'] for s in servers} == {'ACTIVE'}
    assert len(_hosts(servers)) == 1
    # A later member follows the first ones.
    later = libvirt_stack.active(stack, libvirt_stack.boot_id(
        stack, flavor, name='aff-later', hints={'group': group}))
    assert later['OS-EXT-SRV-ATTR:host'] == servers[0]['OS-EXT-SRV-ATTR:host']
    members = stack.request('GET', '/os-server-groups/%s' % group,
                            version=VERSION).json()['server_group']['members']
    assert sorted(members) == sorted([s['id'] for s in servers] + [later['id']])


def test_anti_affinity_group_uses_every_host_then_no_valid_host(stack, flavor, nothing_left):
    group = _group(stack, 'anti-affinity')
    servers = _boot_many(stack, flavor, 4, name='anti', hints={'group': group})
    assert {s['status'] for s in servers} == {'ACTIVE'}
    assert _hosts(servers) == {host: 1 for host in HOSTS}

    fifth = stack.wait_for_status(libvirt_stack.boot_id(
        stack, flavor, name='anti-5', hints={'group': group}), ('ACTIVE', 'ERROR'),
        version=VERSION)
    assert fifth['status'] == 'ERROR'
    assert 'No valid host was found' in fifth['fault']['message']
    assert stack.placement_get('/allocations/%s' % fifth['id'])['allocations'] == {}


def _fail_spawns_on(stack, monkeypatch, *hosts):
    """A driver fault: libvirt refuses to define any domain on ``hosts``."""
    def refuse(xml):
        raise libvirt.libvirtError('injected fault: cannot define the domain')
    for host in hosts:
        monkeypatch.setattr(stack.driver(host).host, 'define', refuse)


def test_a_failing_host_sends_the_build_to_an_alternate(stack, flavor, monkeypatch,
                                                         nothing_left):
    _fail_spawns_on(stack, monkeypatch, 's2')
    # Spread puts one of four servers on each host: the one that tries s2 moves on.
    servers = _boot_many(stack, flavor, 4, name='alt')
    assert {s['status'] for s in servers} == {'ACTIVE'}, [s.get('fault') for s in servers]
    placed = _hosts(servers)
    assert 's2' not in placed and sum(placed.values()) == 4
    assert stack.usages('s2') == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    for host, count in placed.items():
        assert stack.usages(host) == {'VCPU': count, 'MEMORY_MB': count * 256,
                                      'DISK_GB': count}
    for server in servers:
        assert _allocated_on(stack, server['id']) == [server['OS-EXT-SRV-ATTR:host']]
    assert stack.driver('s2').list_instance_uuids() == []
    # The server that was rescheduled says so in its build action's events.
    rescheduled = []
    for server in servers:
        actions = stack.request('GET', '/servers/%s/os-instance-actions' % server['id'],
                                version='2.51').json()['instanceActions']
        create = stack.request('GET', '/servers/%s/os-instance-actions/%s'
                               % (server['id'], actions[-1]['request_id']),
                               version='2.51').json()['instanceAction']
        if any(e['result'] == 'Error' for e in create['events']):
            rescheduled.append(server['id'])
    assert len(rescheduled) == 1


def test_a_build_every_host_refuses_errors_with_each_host_and_reason(
        stack, flavor, monkeypatch, nothing_left):
    _fail_spawns_on(stack, monkeypatch, *HOSTS)
    server = stack.wait_for_status(libvirt_stack.boot_id(stack, flavor, name='doomed'),
                                   ('ACTIVE', 'ERROR'), version=VERSION)
    assert server['status'] == 'ERROR'
    message = server['fault']['message']
    attempts = CONF.scheduler.max_attempts
    assert 'Build failed on the %d hosts tried' % attempts in message
    assert message.count('injected fault: cannot define the domain') == attempts
    assert sum(message.count(host) for host in HOSTS) >= attempts
    assert stack.placement_get('/allocations/%s' % server['id'])['allocations'] == {}


def _placement_put(stack, path, body):
    resp = requests.put(stack.placement.url + path, json=body, timeout=10, headers={
        'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement 1.39'})
    assert resp.status_code == 204, resp.text


def _run(stack, host, fn, *args):
    svc = stack.computes[host]
    return svc._call(fn, *args)


def test_allocations_of_deleted_instances_are_removed_and_others_kept(stack, flavor,
                                                                      nothing_left):
    server = libvirt_stack.active(stack, libvirt_stack.boot_id(stack, flavor, name='orph'))
    host = server['OS-EXT-SRV-ATTR:host']
    ctx = nl_context.get_admin_context()
    # The instance row goes while its allocation stays (as when a delete could not
    # reach Placement); a consumer the cell does not know (a server just scheduled)
    # has an allocation on the same provider.
    _soft_delete_instance(server['id'])
    stranger = str(uuid.uuid4())
    provider = stack.provider(host)['uuid']
    _placement_put(stack, '/allocations/%s' % stranger, {
        'allocations': {provider: {'resources': {'VCPU': 1}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    mgr = stack.computes[host].manager
    _run(stack, host, mgr.update_available_resource, ctx)

    assert stack.placement_get('/allocations/%s' % server['id'])['allocations'] == {}
    assert list(stack.placement_get('/allocations/%s' % stranger)['allocations']) == [
        provider]
    requests.delete(stack.placement.url + '/allocations/%s' % stranger, timeout=10,
                    headers={'X-Auth-Token': 'admin',
                             'OpenStack-API-Version': 'placement 1.39'})

    # Its guest still runs: at start-up it is reported and, when told to, destroyed.
    drv = stack.driver(host)
    assert drv.list_instance_uuids() == [server['id']]
    assert _run(stack, host, guest_audit.audit_guests, mgr, ctx) == {
        server['id']: 'its instance is deleted'}
    assert drv.list_instance_uuids() == [server['id']]
    CONF.set_override('destroy_unknown_guests', True, group='workarounds')
    try:
        _run(stack, host, guest_audit.audit_guests, mgr, ctx)
    finally:
        CONF.clear_override('destroy_unknown_guests', group='workarounds')
    assert drv.list_instance_uuids() == []


def _soft_delete_instance(server_id):
    """Mark the instance deleted in its cell database, nothing else."""
    ctx = nl_context.get_admin_context()
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctx, server_id)
    with nl_context.target_cell(ctx, mapping.cell_mapping) as cctx:
        instance = objects.Instance.get_by_uuid(cctx, server_id)
        instance.destroy()
