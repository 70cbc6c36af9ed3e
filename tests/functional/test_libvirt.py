"""The whole stack on the libvirt driver: each compute a simulated test:/// host."""
from __future__ import annotations

import os
import time

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import build, power_state, task_states
from tests.functional import libvirt_stack

VERSION = libvirt_stack.VERSION
HOSTS = {'lv1': 4, 'lv2': 8}  # host → CPUs of its simulated node


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with libvirt_stack.running(tmp_path_factory, 'libvirt-stack', HOSTS) as stack:
        yield stack


@pytest.fixture(scope='module')
def flavor(stack):
    return stack.create_flavor('lv.tiny')


_boot = libvirt_stack.boot_id
_active = libvirt_stack.active
_wait = libvirt_stack.wait


def _provider(stack, host):
    return stack.provider(host)


def _delete(stack, server_id):
    stack.delete_all([server_id])


def test_each_simulated_host_reports_its_own_inventory(stack):
    for host, cpus in HOSTS.items():
        provider = _provider(stack, host)
        inventory = stack.placement_get('/resource_providers/%s/inventories'
                                        % provider['uuid'])['inventories']
        assert inventory['VCPU']['total'] == cpus
        assert inventory['MEMORY_MB']['total'] == 8192
        assert inventory['DISK_GB']['total'] > 0


def test_boot_runs_a_domain_and_delete_leaves_nothing(stack, flavor):
    server_id = _boot(stack, flavor)
    server = _active(stack, server_id)
    host = server['OS-EXT-SRV-ATTR:host']
    drv = stack.driver(host)
    assert server['OS-EXT-STS:power_state'] == power_state.RUNNING
    assert drv.list_instance_uuids() == [server_id]
    assert drv.host.get_guest(server_id).name == server['OS-EXT-SRV-ATTR:instance_name']
    instance_dir = drv.instance_dir(objects.Instance(uuid=server_id))
    assert os.path.exists(os.path.join(instance_dir, 'disk'))
    provider = _provider(stack, host)
    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    assert allocations[provider['uuid']]['resources'] == {
        'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}

    _delete(stack, server_id)
    assert drv.list_instance_uuids() == []
    assert not os.path.exists(instance_dir)
    assert stack.placement_get('/allocations/%s' % server_id)['allocations'] == {}
    usages = stack.placement_get('/resource_providers/%s/usages' % provider['uuid'])
    assert usages['usages'] == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}


def test_concurrent_builds_download_the_image_once_per_host(stack, flavor):
    before = stack.glance.file_gets.get(stack.image['id'], 0)
    cached_before = {h for h in HOSTS if stack.driver(h).image_cache.cached_images()}
    stack.glance.delay = 0.3
    try:
        ids = [_boot(stack, flavor, name='many-%d' % i) for i in range(4)]
        hosts = {_active(stack, i)['OS-EXT-SRV-ATTR:host'] for i in ids}
    finally:
        stack.glance.delay = 0.0
    downloads = stack.glance.file_gets[stack.image['id']] - before
    assert downloads == len(hosts - cached_before)
    for server_id in ids:
        _delete(stack, server_id)


def test_a_guest_that_stops_on_its_own_is_shutoff_at_once(stack, flavor):
    server_id = _boot(stack, flavor, name='stops')
    host = _active(stack, server_id)['OS-EXT-SRV-ATTR:host']
    stack.driver(host).host.get_guest(server_id).poweroff()  # not through the API
    server = stack.wait_for_status(server_id, ('SHUTOFF',), timeout=5, version=VERSION)
    assert server['OS-EXT-STS:power_state'] == power_state.SHUTDOWN
    _delete(stack, server_id)


def test_sync_power_states_powers_off_a_guest_running_under_a_stopped_instance(stack,
                                                                               flavor):
    server_id = _boot(stack, flavor, name='sync')
    host = _active(stack, server_id)['OS-EXT-SRV-ATTR:host']
    svc = stack.computes[host]
    drv = stack.driver(host)
    guest = drv.host.get_guest(server_id)
    guest.poweroff()
    stack.wait_for_status(server_id, ('SHUTOFF',), timeout=5, version=VERSION)
    # The event's handler is done once it lets go of the instance (the sync skips a
    # locked instance: an operation is under way).
    _wait(lambda: not svc.manager.instance_lock(server_id).locked())
    # Without events only the periodic task can notice the guest running again.
    drv.register_event_listener(None)
    try:
        guest.launch()
        svc._call(svc.manager.sync_power_states, nl_context.get_admin_context())
        assert drv.get_info(objects.Instance(uuid=server_id)).state == power_state.SHUTDOWN
    finally:
        drv.register_event_listener(svc.manager.handle_lifecycle_event)
    server = stack.wait_for_status(server_id, ('SHUTOFF',), version=VERSION)
    assert server['OS-EXT-STS:power_state'] == power_state.SHUTDOWN
    _delete(stack, server_id)


def _set_task_state(server_id, task_state):
    ctx = nl_context.get_admin_context()
    instance = objects.Instance.get_by_uuid(ctx, server_id)
    instance.task_state = task_state
    instance.save()


def test_start_up_recovery_gives_an_interrupted_instance_its_real_state(stack, flavor):
    paused_id = _boot(stack, flavor, name='was-rebooting')
    gone_id = _boot(stack, flavor, name='was-powering-off')
    servers = {i: _active(stack, i) for i in (paused_id, gone_id)}
    for server_id, task_state in ((paused_id, task_states.REBOOTING),
                                  (gone_id, task_states.POWERING_OFF)):
        _set_task_state(server_id, task_state)
        drv = stack.driver(servers[server_id]['OS-EXT-SRV-ATTR:host'])
        guest = drv.host.get_guest(server_id)
        if server_id == paused_id:
            guest.pause()
        else:
            guest.poweroff()
            guest.undefine()
    # The events found a task under way and left the instances alone.
    time.sleep(0.3)
    server = stack.request('GET', '/servers/%s' % paused_id, version=VERSION).json()['server']
    assert (server['status'], server['OS-EXT-STS:task_state']) == ('REBOOT',
                                                                   task_states.REBOOTING)

    for host in {s['OS-EXT-SRV-ATTR:host'] for s in servers.values()}:
        svc = stack.computes[host]
        svc._call(build.recover_interrupted_builds, svc.manager,
                  nl_context.get_admin_context())
    paused = stack.wait_for_status(paused_id, ('PAUSED',), version=VERSION)
    assert paused['OS-EXT-STS:task_state'] is None
    assert paused['OS-EXT-STS:power_state'] == power_state.PAUSED
    gone = stack.wait_for_status(gone_id, ('ERROR',), version=VERSION)
    assert gone['OS-EXT-STS:task_state'] is None
    assert 'is gone from host' in gone['fault']['message']
    for server_id in (paused_id, gone_id):
        _delete(stack, server_id)


def _action(stack, server_id, body):
    return stack.request('POST', '/servers/%s/action' % server_id, json=body,
                         version=VERSION)


def _settled(stack, server_id, statuses):
    """The server in one of ``statuses`` with no task, once lifecycle events of the
    operation have been handled too (they wait for the instance lock)."""
    server = stack.wait_for_status(server_id, statuses, version=VERSION)
    host = server['OS-EXT-SRV-ATTR:host']
    _wait(lambda: not stack.computes[host].manager.instance_lock(server_id).locked())
    server = stack.request('GET', '/servers/%s' % server_id, version=VERSION).json()['server']
    assert server['status'] in statuses and server['OS-EXT-STS:task_state'] is None
    return server


def test_stop_start_reboot_and_console_on_a_domain(stack, flavor):
    server_id = _boot(stack, flavor, name='power')
    host = _active(stack, server_id)['OS-EXT-SRV-ATTR:host']
    guest = stack.driver(host).host.get_guest(server_id)

    assert _action(stack, server_id, {'os-stop': None}).status_code == 202
    server = _settled(stack, server_id, ('SHUTOFF',))
    assert server['OS-EXT-STS:power_state'] == power_state.SHUTDOWN
    assert not guest.is_active()

    assert _action(stack, server_id, {'os-start': None}).status_code == 202
    server = _settled(stack, server_id, ('ACTIVE',))
    assert server['OS-EXT-STS:power_state'] == power_state.RUNNING and guest.is_active()

    for kind in ('SOFT', 'HARD'):
        assert _action(stack, server_id, {'reboot': {'type': kind}}).status_code == 202
        # The guest's own stop and start events must not leave it SHUTOFF.
        server = _settled(stack, server_id, ('ACTIVE',))
        assert server['OS-EXT-STS:power_state'] == power_state.RUNNING
        assert guest.is_active()

    # The test driver writes no console log: give the guest one.
    console = stack.request('POST', '/servers/%s/action' % server_id, version=VERSION,
                            json={'os-getConsoleOutput': {}})
    assert console.status_code == 200 and console.json() == {'output': ''}
    path = os.path.join(stack.driver(host).instance_dir(objects.Instance(uuid=server_id)),
                        'console.log')
    with open(path, 'w') as log:
        log.write('line 1\nline 2\x07\nlogin: \n')
    tail = _action(stack, server_id, {'os-getConsoleOutput': {'length': 2}}).json()
    assert tail == {'output': 'line 2\nlogin: '}
    _delete(stack, server_id)
