"""Resize, confirm, revert, cold and live migration and evacuation on three simulated
libvirt hosts: states, migration records, Placement allocations of both consumers,
usages per host and the guests' domains after each step."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from novalite import context as nl_context
from novalite.compute import evacuate as compute_evacuate
from novalite.conf import CONF
from tests.functional import libvirt_stack

HOSTS = {'rz1': 4, 'rz2': 4, 'rz3': 4}
V = '2.56'
OWNER = 'alice:proj-a'


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with libvirt_stack.running(tmp_path_factory, 'resize-stack', HOSTS) as stack:
        yield stack


@pytest.fixture(scope='module')
def flavors(stack):
    return {'small': stack.create_flavor('rz.small', ram=128, vcpus=1, disk=1),
            'big': stack.create_flavor('rz.big', ram=256, vcpus=2, disk=2),
            'tiny_disk': stack.create_flavor('rz.tinydisk', ram=256, vcpus=1, disk=1)}


@pytest.fixture
def server(stack, flavors):
    server_id = _boot(stack, flavors['small'])
    yield _get(stack, server_id)
    if stack.request('DELETE', '/servers/%s' % server_id).status_code == 204:
        stack.wait_for_deleted(server_id)
    _assert_nothing_left(stack)


# -- helpers ---------------------------------------------------------------------------------

def _boot(stack, flavor, token=OWNER):
    body = {'server': {'name': 'rz', 'imageRef': stack.image['id'],
                       'flavorRef': flavor['id'], 'networks': 'none'}}
    resp = stack.request('POST', '/servers', token=token, version=V, json=body)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version=V)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server_id


def _get(stack, server_id):
    return stack.request('GET', '/servers/%s' % server_id, version=V).json()['server']


def _action(stack, server_id, body, token=OWNER, version=V):
    return stack.request('POST', '/servers/%s/action' % server_id, token=token,
                         version=version, json=body)


def _settled(stack, server_id, status):
    """The server once it is in ``status`` with no task under way."""
    libvirt_stack.wait(lambda: (lambda s: s['status'] == status
                                and s['OS-EXT-STS:task_state'] is None)(
        _get(stack, server_id)), timeout=20)
    return _get(stack, server_id)


def _host(server):
    return server['OS-EXT-SRV-ATTR:host']


def _migrations(stack, server_id):
    resp = stack.request('GET', '/os-migrations?instance_uuid=%s' % server_id,
                         version='2.59')
    assert resp.status_code == 200, resp.text
    return resp.json()['migrations']


def _migration(stack, server_id):
    """The server's newest migration ({} while there is none yet)."""
    migrations = _migrations(stack, server_id)
    return migrations[0] if migrations else {}


def _allocations(stack, consumer):
    """{host: resources} of a Placement consumer."""
    names = {stack.provider(h)['uuid']: h for h in HOSTS}
    allocations = stack.placement_get('/allocations/%s' % consumer)['allocations']
    return {names[rp]: a['resources'] for rp, a in allocations.items()}


def _usages(stack):
    return {h: stack.usages(h).get('MEMORY_MB', 0) for h in HOSTS}


def _assert_nothing_left(stack):
    assert set(_usages(stack).values()) == {0}, _usages(stack)


def _domain_memory_mib(stack, host, server_id):
    xml = stack.driver(host).host.get_guest(server_id).xml()
    memory = ET.fromstring(xml).find('memory')
    assert memory.get('unit') == 'KiB'
    return int(memory.text) // 1024


def _has_domain(stack, host, server_id):
    return server_id in stack.driver(host).list_instance_uuids()


def _events(stack, server_id, action):
    """The results of the action's events, once every one of them has finished: a
    compute finishes its event after its last save of the instance, so a client that saw
    the final state may still find the event unfinished for a moment."""
    path = '/servers/%s/os-instance-actions' % server_id
    found = {}

    def finished():
        actions = [a for a in stack.request('GET', path, version=V).json()['instanceActions']
                   if a['action'] == action]
        assert actions, action
        member = stack.request('GET', '%s/%s' % (path, actions[0]['request_id']),
                               version=V).json()['instanceAction']
        found.clear()
        found.update((e['event'], e['result']) for e in member['events'])
        return all(result is not None for result in found.values())

    libvirt_stack.wait(finished)
    return dict(found)


def _resize(stack, server_id, flavor):
    resp = _action(stack, server_id, {'resize': {'flavorRef': flavor['id'],
                                                 'OS-DCF:diskConfig': 'AUTO'}})
    assert resp.status_code == 202, resp.text
    return _settled(stack, server_id, 'VERIFY_RESIZE')


# -- resize ----------------------------------------------------------------------------------

def test_resize_then_confirm(stack, flavors, server):
    server_id, source = server['id'], _host(server)
    assert _allocations(stack, server_id) == {source: {'VCPU': 1, 'MEMORY_MB': 128,
                                                      'DISK_GB': 1}}
    resized = _resize(stack, server_id, flavors['big'])
    dest = _host(resized)
    assert dest != source
    assert resized['OS-EXT-STS:vm_state'] == 'resized'
    assert resized['flavor']['original_name'] == 'rz.big'
    migration = _migration(stack, server_id)
    assert (migration['status'], migration['migration_type']) == ('finished', 'resize')
    assert (migration['source_compute'], migration['dest_compute']) == (source, dest)
    # Both consumers: the instance holds the destination, the migration the source.
    assert _allocations(stack, server_id) == {dest: {'VCPU': 2, 'MEMORY_MB': 256,
                                                    'DISK_GB': 2}}
    assert _allocations(stack, migration['uuid']) == {source: {'VCPU': 1, 'MEMORY_MB': 128,
                                                              'DISK_GB': 1}}
    usages = _usages(stack)
    assert (usages[source], usages[dest]) == (128, 256)
    assert sum(usages.values()) == 384
    assert _domain_memory_mib(stack, dest, server_id) == 256
    assert _has_domain(stack, source, server_id)  # stopped, kept for a revert
    assert _events(stack, server_id, 'resize') == {
        'conductor_migrate_server': 'Success', 'compute_prep_resize': 'Success',
        'compute_resize_instance': 'Success', 'compute_finish_resize': 'Success'}

    again = _action(stack, server_id, {'resize': {'flavorRef': flavors['small']['id']}})
    assert again.status_code == 409
    assert again.json()['conflictingRequest']['message'] == (
        "Cannot 'resize' instance %s while it is in vm_state resized" % server_id)

    resp = _action(stack, server_id, {'confirmResize': None})
    assert resp.status_code == 204, resp.text
    confirmed = _settled(stack, server_id, 'ACTIVE')
    assert _host(confirmed) == dest
    assert _migration(stack, server_id)['status'] == 'confirmed'
    assert _allocations(stack, migration['uuid']) == {}
    assert _allocations(stack, server_id) == {dest: {'VCPU': 2, 'MEMORY_MB': 256,
                                                    'DISK_GB': 2}}
    assert _usages(stack)[source] == 0
    assert not _has_domain(stack, source, server_id)
    source_dir = stack.driver(source).instance_dir(type('I', (), {'uuid': server_id}))
    assert not os.path.exists(source_dir + '_resize')
    assert _events(stack, server_id, 'confirmResize') == {'compute_confirm_resize': 'Success'}

    not_resized = _action(stack, server_id, {'confirmResize': None})
    assert not_resized.status_code == 409
    assert "Cannot 'confirmResize' instance" in not_resized.text


def test_deleting_a_resized_server_confirms_first_and_leaves_nothing(stack, flavors,
                                                                    server):
    server_id, source = server['id'], _host(server)
    resized = _resize(stack, server_id, flavors['big'])
    dest = _host(resized)
    migration = _migration(stack, server_id)
    assert _has_domain(stack, source, server_id)

    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
    # The source's guest, disks and allocation (held by the migration) went too.
    libvirt_stack.wait(lambda: not _allocations(stack, migration['uuid']), timeout=20)
    libvirt_stack.wait(lambda: not _has_domain(stack, source, server_id), timeout=20)
    assert not _has_domain(stack, dest, server_id)
    assert _allocations(stack, server_id) == {}
    assert _migration(stack, server_id)['status'] == 'confirmed'
    source_dir = stack.driver(source).instance_dir(type('I', (), {'uuid': server_id}))
    assert not os.path.exists(source_dir + '_resize')
    _assert_nothing_left(stack)


def test_resize_then_revert(stack, flavors, server):
    server_id, source = server['id'], _host(server)
    resized = _resize(stack, server_id, flavors['big'])
    dest = _host(resized)
    migration = _migration(stack, server_id)
    resp = _action(stack, server_id, {'revertResize': None})
    assert resp.status_code == 202, resp.text
    reverted = _settled(stack, server_id, 'ACTIVE')
    assert _host(reverted) == source
    assert reverted['flavor']['original_name'] == 'rz.small'
    assert _migration(stack, server_id)['status'] == 'reverted'
    assert _allocations(stack, server_id) == {source: {'VCPU': 1, 'MEMORY_MB': 128,
                                                      'DISK_GB': 1}}
    assert _allocations(stack, migration['uuid']) == {}
    usages = _usages(stack)
    assert (usages[source], usages[dest]) == (128, 0)
    assert not _has_domain(stack, dest, server_id)
    assert _domain_memory_mib(stack, source, server_id) == 128
    guest = stack.driver(source).host.get_guest(server_id)
    assert guest.is_active()
    assert _events(stack, server_id, 'revertResize') == {
        'compute_revert_resize': 'Success', 'compute_finish_revert_resize': 'Success'}


def test_a_stopped_server_stays_stopped(stack, flavors, server):
    server_id = server['id']
    assert _action(stack, server_id, {'os-stop': None}).status_code == 202
    _settled(stack, server_id, 'SHUTOFF')
    resized = _resize(stack, server_id, flavors['big'])
    assert not stack.driver(_host(resized)).host.get_guest(server_id).is_active()
    assert _action(stack, server_id, {'confirmResize': None}).status_code == 204
    assert _settled(stack, server_id, 'SHUTOFF')['OS-EXT-STS:vm_state'] == 'stopped'


def test_refusals(stack, flavors, server):
    server_id = server['id']
    same = _action(stack, server_id, {'resize': {'flavorRef': flavors['small']['id']}})
    assert same.status_code == 400
    assert same.json()['badRequest']['message'] == 'Resize requires a flavor change.'
    unknown = _action(stack, server_id, {'resize': {'flavorRef': 'nope'}})
    assert unknown.status_code == 400
    assert _action(stack, server_id, {'resize': {}}).status_code == 400
    for key in ('confirmResize', 'revertResize'):
        resp = _action(stack, server_id, {key: None})
        assert resp.status_code == 409
        assert resp.json()['conflictingRequest']['message'] == (
            "Cannot '%s' instance %s while it is in vm_state active" % (key, server_id))
    forbidden = _action(stack, server_id, {'migrate': None})
    assert forbidden.status_code == 403
    forbidden = _action(stack, server_id, {'os-migrateLive': {
        'block_migration': 'auto', 'host': None}})
    assert forbidden.status_code == 403
    assert _action(stack, server_id, {'evacuate': {}}).status_code == 403

    first = _action(stack, server_id, {'resize': {'flavorRef': flavors['big']['id']}})
    assert first.status_code == 202
    during = _action(stack, server_id, {'resize': {'flavorRef': flavors['big']['id']}})
    assert during.status_code == 409
    assert 'while it is in task_state' in during.json()['conflictingRequest']['message']
    _settled(stack, server_id, 'VERIFY_RESIZE')
    assert _action(stack, server_id, {'revertResize': None}).status_code == 202
    _settled(stack, server_id, 'ACTIVE')


def test_a_disk_that_cannot_shrink_rolls_back(stack, flavors):
    server_id = _boot(stack, flavors['big'])
    source = _host(_get(stack, server_id))
    resp = _action(stack, server_id, {'resize': {'flavorRef': flavors['tiny_disk']['id']}})
    assert resp.status_code == 202
    libvirt_stack.wait(lambda: _migration(stack, server_id).get('status') == 'error')
    server = _settled(stack, server_id, 'ACTIVE')
    assert _host(server) == source
    assert server['flavor']['original_name'] == 'rz.big'
    assert _allocations(stack, server_id) == {source: {'VCPU': 2, 'MEMORY_MB': 256,
                                                      'DISK_GB': 2}}
    assert _allocations(stack, _migration(stack, server_id)['uuid']) == {}
    assert sum(_usages(stack).values()) == 256
    assert stack.driver(source).host.get_guest(server_id).is_active()
    assert _events(stack, server_id, 'resize')['compute_resize_instance'] == 'Error'
    stack.delete_all([server_id])
    _assert_nothing_left(stack)


def test_resize_is_confirmed_after_the_window(stack, flavors, server):
    server_id = server['id']
    dest = _host(_resize(stack, server_id, flavors['big']))
    CONF.set_override('resize_confirm_window', 1)
    try:
        manager = stack.computes[dest].manager

        def confirmed():
            manager._poll_unconfirmed_resizes(nl_context.get_admin_context())
            return _migration(stack, server_id)['status'] == 'confirmed'
        libvirt_stack.wait(confirmed, timeout=20)
    finally:
        CONF.clear_override('resize_confirm_window')
    _settled(stack, server_id, 'ACTIVE')
    assert _allocations(stack, _migration(stack, server_id)['uuid']) == {}


# -- migrations -------------------------------------------------------------------------------

def test_cold_migrate_to_a_host(stack, flavors, server):
    server_id, source = server['id'], _host(server)
    target = sorted(h for h in HOSTS if h != source)[-1]
    resp = _action(stack, server_id, {'migrate': {'host': target}}, token='admin:admin')
    assert resp.status_code == 202, resp.text
    migrated = _settled(stack, server_id, 'VERIFY_RESIZE')
    assert _host(migrated) == target
    migration = _migration(stack, server_id)
    assert migration['migration_type'] == 'migration'
    assert _allocations(stack, migration['uuid']) == {source: {'VCPU': 1, 'MEMORY_MB': 128,
                                                              'DISK_GB': 1}}
    assert _events(stack, server_id, 'migrate')['compute_finish_resize'] == 'Success'
    assert _action(stack, server_id, {'confirmResize': None}).status_code == 204
    _settled(stack, server_id, 'ACTIVE')
    assert _usages(stack)[source] == 0 and _usages(stack)[target] == 128
    unknown = _action(stack, server_id, {'migrate': {'host': 'nowhere'}},
                      token='admin:admin')
    assert unknown.status_code == 400
    # Before 2.56 Nova does not look at the body: the host is ignored, the scheduler picks.
    old = _action(stack, server_id, {'migrate': {'host': 'nowhere'}}, token='admin:admin',
                  version='2.55')
    assert old.status_code == 202, old.text
    _settled(stack, server_id, 'VERIFY_RESIZE')
    assert _action(stack, server_id, {'confirmResize': {}}).status_code == 204
    _settled(stack, server_id, 'ACTIVE')


def test_live_migration_is_refused_by_the_test_driver(stack, server):
    server_id, source = server['id'], _host(server)
    old = _action(stack, server_id, {'os-migrateLive': {'block_migration': False,
                                                        'disk_over_commit': False,
                                                        'host': None}},
                  token='admin:admin', version='2.1')
    assert old.status_code == 400, old.text
    assert 'has no migration support' in old.json()['badRequest']['message']
    resp = _action(stack, server_id, {'os-migrateLive': {'block_migration': 'auto',
                                                         'host': None}},
                   token='admin:admin', version='2.34')
    assert resp.status_code == 202, resp.text
    libvirt_stack.wait(lambda: _migration(stack, server_id).get('status') == 'error')
    server = _settled(stack, server_id, 'ACTIVE')
    assert _host(server) == source
    assert [m['migration_type'] for m in _migrations(stack, server_id)] == [
        'live-migration', 'live-migration']
    assert _allocations(stack, server_id) == {source: {'VCPU': 1, 'MEMORY_MB': 128,
                                                      'DISK_GB': 1}}
    assert sum(_usages(stack).values()) == 128
    assert _events(stack, server_id, 'live-migration')[
        'conductor_live_migrate_instance'] == 'Error'


def test_evacuate_from_a_dead_host(stack, server):
    server_id, source = server['id'], _host(server)
    up = _action(stack, server_id, {'evacuate': {}}, token='admin:admin')
    assert up.status_code == 400
    assert 'is still in use' in up.json()['badRequest']['message']
    stack.force_down(source, True)
    try:
        resp = _action(stack, server_id, {'evacuate': {}}, token='admin:admin')
        assert resp.status_code == 200, resp.text
        evacuated = _settled(stack, server_id, 'ACTIVE')
        dest = _host(evacuated)
        assert dest != source
        migration = _migration(stack, server_id)
        assert (migration['migration_type'], migration['status']) == ('evacuation', 'done')
        assert _allocations(stack, server_id) == {dest: {'VCPU': 1, 'MEMORY_MB': 128,
                                                        'DISK_GB': 1}}
        assert _allocations(stack, migration['uuid']) == {source: {
            'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}}
        assert _has_domain(stack, dest, server_id)
        assert _has_domain(stack, source, server_id)  # the dead host still has it
        assert _events(stack, server_id, 'evacuate')['compute_rebuild_instance'] == \
            'Success'
        # The host comes back: its compute service cleans up on start.
        manager = stack.computes[source].manager
        cleaned = compute_evacuate.destroy_evacuated_instances(
            manager, nl_context.get_admin_context())
        assert cleaned == [server_id]
    finally:
        stack.force_down(source, False)
    assert not _has_domain(stack, source, server_id)
    assert _allocations(stack, migration['uuid']) == {}
    assert _migration(stack, server_id)['status'] == 'completed'
    assert _usages(stack)[source] == 0
