"""Rebuild, createImage, createBackup, shelve, shelveOffload and unshelve through the
whole stack on simulated libvirt hosts: states, instance actions, Placement after each
step, the images in the Glance double, and the 409s."""
from __future__ import annotations

import os
import time

import pytest
from oslo_messaging.notify import _impl_test

from novalite import context as nl_context
from novalite.conf import CONF
from tests.functional import libvirt_stack, notifier
from tests.functional.test_response_schemas import check, points

HOSTS = {'sv1': 4, 'sv2': 4}
LATEST = '2.104'
OWNER = 'alice:proj-a'
ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with libvirt_stack.running(tmp_path_factory, 'shelve-stack', HOSTS) as stack, \
            notifier.kept():
        yield stack
        _nothing_left_behind(stack)


def _nothing_left_behind(stack):
    """After the module (every server deleted): no usage, no domain, no image that
    is not active (a failed snapshot deletes its image)."""
    for host in HOSTS:
        assert stack.usages(host) == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
        assert stack.driver(host).list_instance_uuids() == []
    assert not [i for i in stack.glance.images.values() if i['status'] != 'active']


@pytest.fixture(scope='module')
def flavor(stack):
    return stack.create_flavor('sv.tiny')


@pytest.fixture
def offload_time():
    """Set ``[DEFAULT] shelved_offload_time`` for one test."""
    def set_time(seconds: int) -> None:
        CONF.set_override('shelved_offload_time', seconds)
    yield set_time
    CONF.clear_override('shelved_offload_time')


@pytest.fixture
def server(stack, flavor):
    """An ACTIVE server of the project member; deleted (if still there) afterwards,
    with nothing left in Placement."""
    server_id = _boot(stack, flavor)
    yield _server(stack, server_id)
    if _req(stack, 'GET', '/servers/%s' % server_id).status_code == 200:
        stack.wait_for_status(server_id, ('ACTIVE', 'ERROR', 'SHUTOFF', 'SHELVED',
                                          'SHELVED_OFFLOADED'), token=ADMIN)
        _settled(stack, server_id)
        assert _req(stack, 'DELETE', '/servers/%s' % server_id).status_code == 204
        stack.wait_for_deleted(server_id)
    assert _allocations(stack, server_id) == {}


def _req(stack, method, path, token=OWNER, version=LATEST, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


def _action(stack, server_id, body, token=OWNER, version=LATEST):
    return _req(stack, 'POST', '/servers/%s/action' % server_id, token=token,
                version=version, json=body)


def _boot(stack, flavor, image_id=None, name='sv'):
    resp = _req(stack, 'POST', '/servers', json={'server': {
        'name': name, 'imageRef': image_id or stack.image['id'], 'flavorRef': flavor['id'],
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


def _server(stack, server_id):
    """The server once ACTIVE, as the admin sees it (with its host)."""
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), token=ADMIN,
                                   version=LATEST)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return _settled(stack, server_id)


def _settled(stack, server_id, timeout=20.0):
    """The server (admin view) once no task is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = _req(stack, 'GET', '/servers/%s' % server_id, token=ADMIN).json()['server']
        if server['OS-EXT-STS:task_state'] is None:
            return server
        time.sleep(0.05)
    raise AssertionError('server %s still has a task' % server_id)


def _wait_status(stack, server_id, status):
    stack.wait_for_status(server_id, (status,), token=ADMIN, version=LATEST)
    return _settled(stack, server_id)


def _allocations(stack, server_id):
    return stack.placement_get('/allocations/%s' % server_id)['allocations']


def _events(stack, server_id, action):
    """{event name: result} of the server's (only) ``action``."""
    path = '/servers/%s/os-instance-actions' % server_id
    actions = [a for a in _req(stack, 'GET', path).json()['instanceActions']
               if a['action'] == action]
    assert len(actions) == 1, actions
    member = _req(stack, 'GET', '%s/%s' % (path, actions[0]['request_id']),
                  token=ADMIN).json()['instanceAction']
    return {e['event']: e['result'] for e in member['events']}


def _wait_events(stack, server_id, action, wanted, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        events = _events(stack, server_id, action)
        if set(wanted) <= set(events) and None not in events.values():
            return events
        assert time.monotonic() < deadline, events
        time.sleep(0.05)


def _notified(server_id):
    return [message['event_type']
            for _ctx, message, _priority, _retry in list(_impl_test.NOTIFICATIONS)
            if message['payload']['nova_object.data']['uuid'] == server_id]


def _usage_of(flavor):
    return {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['ram'], 'DISK_GB': flavor['disk']}


def _record_task_states(stack, host, method):
    """Wrap ``method`` of the host's driver to record the instance's task_state at
    each call; returns the list it fills."""
    drv = stack.driver(host)
    seen = []
    real = getattr(drv, method)

    def wrapper(*args, **kwargs):
        instance = next(a for a in args if hasattr(a, 'task_state'))
        seen.append(instance.task_state)
        return real(*args, **kwargs)
    setattr(drv, method, wrapper)
    return seen


# -- rebuild -----------------------------------------------------------------------------

def test_rebuild_spawns_again_from_the_new_image(stack, server, flavor):
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    drv = stack.driver(host)
    before = drv.host.get_guest(server_id)
    allocations = _allocations(stack, server_id)
    new_image = stack.glance.add_image(b'\1' * 65536, name='other')
    destroyed = _record_task_states(stack, host, 'destroy')
    spawned = _record_task_states(stack, host, 'spawn')
    try:
        resp = _action(stack, server_id, {'rebuild': {
            'imageRef': new_image['id'], 'name': 'rebuilt', 'metadata': {'k': 'v'},
            'adminPass': 'sekrit', 'preserve_ephemeral': False}})
        assert resp.status_code == 202, resp.text
        body = resp.json()['server']
        assert body['adminPass'] == 'sekrit'
        assert body['status'] == 'REBUILD'
        assert body['name'] == 'rebuilt'
        rebuilt = _wait_status(stack, server_id, 'ACTIVE')
    finally:
        del drv.destroy, drv.spawn
    assert destroyed == ['rebuild_block_device_mapping']
    assert spawned == ['rebuild_spawning']
    assert rebuilt['image']['id'] == new_image['id']
    assert rebuilt['metadata'] == {'k': 'v'}
    assert rebuilt['OS-EXT-SRV-ATTR:host'] == host
    assert drv.host.get_guest(server_id).is_active()
    assert drv.host.get_guest(server_id).name == before.name
    assert stack.glance.file_gets[new_image['id']] == 1
    # Same host, same flavor: the allocation is the one it had.
    assert _allocations(stack, server_id) == allocations
    assert stack.usages(host) == _usage_of(flavor)
    assert _wait_events(stack, server_id, 'rebuild',
                        ('conductor_rebuild_server', 'compute_rebuild_instance')) == {
        'conductor_rebuild_server': 'Success', 'compute_rebuild_instance': 'Success'}
    names = _notified(server_id)
    assert 'instance.rebuild.start' in names and 'instance.rebuild.end' in names

    # The image is in this host's cache now: a second rebuild does not download it.
    assert _action(stack, server_id, {'rebuild': {
        'imageRef': new_image['id']}}).status_code == 202
    _wait_status(stack, server_id, 'ACTIVE')
    assert stack.glance.file_gets[new_image['id']] == 1


def test_rebuild_to_an_image_the_host_cannot_run(stack, server):
    server_id = server['id']
    ppc = stack.glance.add_image(b'\2' * 65536, name='ppc', hw_architecture='ppc64le')
    resp = _action(stack, server_id, {'rebuild': {'imageRef': ppc['id']}})
    assert resp.status_code == 202, resp.text
    failed = _wait_status(stack, server_id, 'ERROR')
    assert 'No valid host' in failed['fault']['message']
    assert failed['image']['id'] == stack.image['id']
    events = _wait_events(stack, server_id, 'rebuild', ('conductor_rebuild_server',))
    assert events == {'conductor_rebuild_server': 'Error'}


def test_rebuild_refusals(stack, flavor, server):
    server_id = server['id']
    building = _boot(stack, flavor, name='building')
    try:
        resp = _action(stack, building, {'rebuild': {'imageRef': stack.image['id']}})
        if resp.status_code != 202:  # it may have become ACTIVE already
            assert resp.status_code == 409, resp.text
            assert "Cannot 'rebuild' instance %s while it is in vm_state building" \
                % building in resp.json()['conflictingRequest']['message']
    finally:
        _server(stack, building)
        assert _req(stack, 'DELETE', '/servers/%s' % building).status_code == 204
        stack.wait_for_deleted(building)
    resp = _action(stack, server_id, {'rebuild': {
        'imageRef': '9b2b8b43-62a5-4c7f-9f0e-61fc3b3c3a11'}})
    assert resp.status_code == 400
    assert 'Cannot find image for rebuild' in resp.text
    resp = _action(stack, server_id, {'rebuild': {
        'imageRef': stack.image['id'], 'trusted_image_certificates': ['x']}})
    assert resp.status_code == 400
    # Fields of later microversions are refused before them.
    resp = _action(stack, server_id, {'rebuild': {
        'imageRef': stack.image['id'], 'hostname': 'h1'}}, version='2.89')
    assert resp.status_code == 400
    resp = _action(stack, server_id, {'rebuild': {
        'imageRef': stack.image['id'], 'key_name': 'nokey'}})
    assert resp.status_code == 400
    assert 'Invalid key_name provided.' in resp.text
    assert _action(stack, server_id, {'lock': None}, token=ADMIN).status_code == 202
    resp = _action(stack, server_id, {'rebuild': {'imageRef': stack.image['id']}})
    assert resp.status_code == 409
    assert _action(stack, server_id, {'unlock': None}, token=ADMIN).status_code == 202
    assert _settled(stack, server_id)['status'] == 'ACTIVE'



@pytest.fixture(scope='module')
def schema_server(stack, flavor):
    server_id = _boot(stack, flavor, name='schema')
    _server(stack, server_id)
    yield server_id
    assert _req(stack, 'DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)


@pytest.mark.parametrize('version', points('servers'))
def test_rebuild_response_matches_tempest(stack, schema_server, version):
    body = {'rebuild': {'imageRef': stack.image['id'], 'adminPass': 'pw'}}
    check(stack, 'POST', '/servers/%s/action' % schema_server, 'servers',
          'rebuild_server_with_admin_pass', version, body)
    _wait_status(stack, schema_server, 'ACTIVE')

# -- snapshots ---------------------------------------------------------------------------

def test_create_image_and_boot_a_server_from_it(stack, server, flavor):
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    allocations = _allocations(stack, server_id)
    snapshotting = _record_task_states(stack, host, 'snapshot')
    try:
        resp = _action(stack, server_id, {'createImage': {
            'name': 'snap', 'metadata': {'purpose': 'test'}}})
        assert resp.status_code == 202, resp.text
        image_id = resp.json()['image_id']
        _settled(stack, server_id)
    finally:
        del stack.driver(host).snapshot
    assert snapshotting == ['image_snapshot']
    image = stack.glance.images[image_id]
    assert image['status'] == 'active'
    assert image['name'] == 'snap'
    assert image['disk_format'] == 'qcow2'
    assert image['image_type'] == 'snapshot'
    assert image['instance_uuid'] == server_id
    assert image['base_image_ref'] == stack.image['id']
    assert image['owner'] == 'proj-a'
    assert image['user_id'] == 'alice'
    assert image['purpose'] == 'test'
    assert stack.glance.data[image_id][:4] == b'QFI\xfb'
    assert _settled(stack, server_id)['status'] == 'ACTIVE'
    assert _allocations(stack, server_id) == allocations
    assert _wait_events(stack, server_id, 'createImage', ('compute_snapshot_instance',)) \
        == {'compute_snapshot_instance': 'Success'}
    names = _notified(server_id)
    assert 'instance.snapshot.start' in names and 'instance.snapshot.end' in names

    # The snapshot boots.
    child = _boot(stack, flavor, image_id=image_id, name='from-snap')
    try:
        booted = _server(stack, child)
        assert booted['image']['id'] == image_id
        assert stack.driver(booted['OS-EXT-SRV-ATTR:host']).host.get_guest(child)
    finally:
        assert _req(stack, 'DELETE', '/servers/%s' % child).status_code == 204
        stack.wait_for_deleted(child)
    assert _allocations(stack, child) == {}

    # Before 2.45 the image's URL comes as the Location.
    resp = _action(stack, server_id, {'createImage': {'name': 'old'}}, version='2.44')
    assert resp.status_code == 202, resp.text
    location = resp.headers['Location']
    assert location.startswith(stack.glance.server.url)
    _settled(stack, server_id)
    assert stack.glance.images[location.rsplit('/', 1)[1]]['status'] == 'active'


def test_create_backup_rotates(stack, server):
    server_id = server['id']
    made = []
    for number in range(3):
        resp = _action(stack, server_id, {'createBackup': {
            'name': 'b%d' % number, 'backup_type': 'daily', 'rotation': 2}})
        assert resp.status_code == 202, resp.text
        made.append(resp.json()['image_id'])
        _settled(stack, server_id)
    kept = [i['id'] for i in stack.glance.images.values()
            if i.get('instance_uuid') == server_id and i.get('image_type') == 'backup']
    assert sorted(kept) == sorted(made[1:])
    assert made[0] in stack.glance.deleted


# -- shelve ------------------------------------------------------------------------------

def test_shelve_offloads_at_once_and_unshelve_comes_back(stack, server, flavor):
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    directory = stack.driver(host).instance_dir(type('I', (), {'uuid': server_id}))
    assert os.path.isdir(directory)
    assert _action(stack, server_id, {'shelve': None}).status_code == 202
    shelved = _wait_status(stack, server_id, 'SHELVED_OFFLOADED')
    assert shelved['OS-EXT-SRV-ATTR:host'] is None
    assert _allocations(stack, server_id) == {}
    assert stack.usages(host) == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    assert server_id not in stack.driver(host).list_instance_uuids()
    assert not os.path.exists(directory)
    images = [i for i in stack.glance.images.values() if i['name'] == 'sv-shelved'
              and i.get('instance_uuid') == server_id]
    assert len(images) == 1 and images[0]['status'] == 'active'
    assert images[0]['image_type'] == 'snapshot'
    assert _wait_events(stack, server_id, 'shelve', ('compute_shelve_instance',)) == {
        'compute_shelve_instance': 'Success'}
    names = _notified(server_id)
    for name in ('instance.shelve.start', 'instance.shelve.end',
                 'instance.shelve_offload.start', 'instance.shelve_offload.end'):
        assert name in names

    # What a shelved-offloaded server refuses.
    for body, name in (({'createImage': {'name': 'x'}}, 'createImage'),
                       ({'shelve': None}, 'shelve'),
                       ({'rebuild': {'imageRef': stack.image['id']}}, 'rebuild')):
        resp = _action(stack, server_id, body)
        assert resp.status_code == 409, resp.text
        assert "Cannot '%s' instance %s while it is in vm_state shelved_offloaded" % (
            name, server_id) in resp.json()['conflictingRequest']['message']

    assert _action(stack, server_id, {'unshelve': None}).status_code == 202
    back = _wait_status(stack, server_id, 'ACTIVE')
    new_host = back['OS-EXT-SRV-ATTR:host']
    assert stack.driver(new_host).host.get_guest(server_id).is_active()
    allocations = _allocations(stack, server_id)
    assert list(allocations) == [stack.provider(new_host)['uuid']]
    assert allocations[stack.provider(new_host)['uuid']]['resources'] == _usage_of(flavor)
    assert images[0]['id'] in stack.glance.deleted
    assert _wait_events(stack, server_id, 'unshelve', (
        'get_image_info', 'schedule_instances', 'compute_unshelve_instance')) == {
        'get_image_info': 'Success', 'schedule_instances': 'Success',
        'compute_unshelve_instance': 'Success'}
    names = _notified(server_id)
    assert 'instance.unshelve.start' in names and 'instance.unshelve.end' in names

    resp = _action(stack, server_id, {'unshelve': None})
    assert resp.status_code == 409
    assert "Cannot 'unshelve' instance %s while it is in vm_state active" % server_id \
        in resp.json()['conflictingRequest']['message']


def test_shelve_keeps_the_allocation_until_offloaded(stack, server, flavor, offload_time):
    offload_time(-1)
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    allocations = _allocations(stack, server_id)
    assert _action(stack, server_id, {'shelve': None}).status_code == 202
    shelved = _wait_status(stack, server_id, 'SHELVED')
    assert shelved['OS-EXT-SRV-ATTR:host'] == host
    assert _allocations(stack, server_id) == allocations
    assert not stack.driver(host).host.get_guest(server_id).is_active()
    # 2.77's zone is only for an offloaded server.
    resp = _action(stack, server_id, {'unshelve': {'availability_zone': 'nova'}})
    assert resp.status_code == 409
    assert 'must be SHELVED_OFFLOADED' in resp.text

    assert _action(stack, server_id, {'shelveOffload': None}).status_code == 403
    assert _action(stack, server_id, {'shelveOffload': None}, token=ADMIN).status_code \
        == 202
    _wait_status(stack, server_id, 'SHELVED_OFFLOADED')
    assert _allocations(stack, server_id) == {}
    assert _wait_events(stack, server_id, 'shelveOffload',
                        ('compute_shelve_offload_instance',)) == {
        'compute_shelve_offload_instance': 'Success'}

    # 2.91: an admin unshelves onto a host of their choice.
    other = next(h for h in HOSTS if h != host)
    resp = _action(stack, server_id, {'unshelve': {'host': other}}, token=ADMIN)
    assert resp.status_code == 202, resp.text
    back = _wait_status(stack, server_id, 'ACTIVE')
    assert back['OS-EXT-SRV-ATTR:host'] == other
    assert list(_allocations(stack, server_id)) == [stack.provider(other)['uuid']]
    assert stack.usages(host) == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}


def test_unshelve_of_a_server_never_offloaded(stack, server, offload_time):
    offload_time(-1)
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    allocations = _allocations(stack, server_id)
    assert _action(stack, server_id, {'shelve': None}).status_code == 202
    _wait_status(stack, server_id, 'SHELVED')
    image_id = next(i['id'] for i in stack.glance.images.values()
                    if i.get('instance_uuid') == server_id)
    assert _action(stack, server_id, {'unshelve': None}).status_code == 202
    back = _wait_status(stack, server_id, 'ACTIVE')
    assert back['OS-EXT-SRV-ATTR:host'] == host
    assert _allocations(stack, server_id) == allocations
    assert image_id in stack.glance.deleted
    assert stack.driver(host).host.get_guest(server_id).is_active()


def test_periodic_task_offloads_old_shelved_servers(stack, server, offload_time):
    offload_time(1)
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    assert _action(stack, server_id, {'shelve': None}).status_code == 202
    _wait_status(stack, server_id, 'SHELVED')
    manager = stack.computes[host].manager
    context = nl_context.get_admin_context()
    deadline = time.monotonic() + 10
    while _settled(stack, server_id)['status'] == 'SHELVED':
        assert time.monotonic() < deadline
        manager._poll_shelved_instances(context)
        time.sleep(0.2)
    assert _settled(stack, server_id)['status'] == 'SHELVED_OFFLOADED'
    assert _allocations(stack, server_id) == {}



# -- failures ----------------------------------------------------------------------------

def test_failed_snapshot_deletes_its_image(stack, server):
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    drv = stack.driver(host)

    def broken(context, instance, image_id, update_task_state):
        update_task_state(task_state='image_pending_upload')
        raise RuntimeError('disk unreadable')
    drv.snapshot = broken
    try:
        resp = _action(stack, server_id, {'createImage': {'name': 'doomed'}})
        assert resp.status_code == 202, resp.text
        image_id = resp.json()['image_id']
        events = _wait_events(stack, server_id, 'createImage', ('compute_snapshot_instance',))
    finally:
        del drv.snapshot
    assert events == {'compute_snapshot_instance': 'Error'}
    after = _settled(stack, server_id)
    assert after['status'] == 'ACTIVE'
    assert image_id not in stack.glance.images and image_id in stack.glance.deleted


def _set_computes(stack, status):
    services = _req(stack, 'GET', '/os-services?binary=novalite-compute', token=ADMIN,
                    version='2.53').json()['services']
    assert len(services) == len(HOSTS), services
    for service in services:
        resp = _req(stack, 'PUT', '/os-services/%s' % service['id'], token=ADMIN,
                    version='2.53', json={'status': status})
        assert resp.status_code == 200, resp.text


def test_unshelve_with_no_host_stays_offloaded(stack, server):
    server_id = server['id']
    assert _action(stack, server_id, {'shelve': None}).status_code == 202
    _wait_status(stack, server_id, 'SHELVED_OFFLOADED')
    _set_computes(stack, 'disabled')
    try:
        assert _action(stack, server_id, {'unshelve': None}).status_code == 202
        events = _wait_events(stack, server_id, 'unshelve', ('schedule_instances',))
    finally:
        _set_computes(stack, 'enabled')
    assert events == {'get_image_info': 'Success', 'schedule_instances': 'Error'}
    stuck = _settled(stack, server_id)
    assert stuck['status'] == 'SHELVED_OFFLOADED'
    assert stuck['OS-EXT-SRV-ATTR:host'] is None
    assert _allocations(stack, server_id) == {}
