"""In-place server actions on simulated libvirt hosts: pause, suspend, lock, rescue,
reset state, admin password, crash dump and soft delete, with their states, instance
actions, notifications, Placement usages and the domain in libvirt."""
from __future__ import annotations

import os
import time

import pytest
from oslo_messaging.notify import _impl_test

from novalite import context as nl_context
from novalite import exception
from novalite.compute import deferred_delete, power_state
from novalite.conf import CONF
from novalite.objects import base as obj_base
from tests.functional import libvirt_stack, notifier

OWNER = 'alice:proj-a'
ADMIN = 'admin:admin'
LATEST = '2.104'
HOSTS = {'ip1': 4}
USED = {'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with libvirt_stack.running(tmp_path_factory, 'inplace', HOSTS) as stack:
        yield stack


@pytest.fixture(scope='module')
def flavor(stack):
    return stack.create_flavor('ip.tiny')


@pytest.fixture
def server(stack, flavor):
    """An ACTIVE server of alice's, deleted (for good) afterwards."""
    server_id = _boot(stack, flavor)
    yield server_id
    _req(stack, 'POST', '/servers/%s/action' % server_id, token=ADMIN,
         json={'unlock': None})
    resp = _req(stack, 'POST', '/servers/%s/action' % server_id, token=ADMIN,
                json={'forceDelete': None})
    assert resp.status_code in (202, 404), resp.text
    stack.wait_for_deleted(server_id)
    assert stack.usages('ip1') == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}


def _boot(stack, flavor, image=None):
    body = {'server': {'name': 'ip-vm', 'imageRef': (image or stack.image)['id'],
                       'flavorRef': flavor['id'], 'networks': 'none'}}
    resp = _req(stack, 'POST', '/servers', json=body)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    _settled(stack, server_id, ('ACTIVE',))
    return server_id


def _req(stack, method, path, token=OWNER, version=LATEST, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


def _action(stack, server_id, body, token=OWNER, version=LATEST, code=202):
    resp = _req(stack, 'POST', '/servers/%s/action' % server_id, token=token,
                version=version, json=body)
    assert resp.status_code == code, resp.text
    return resp


def _show(stack, server_id, token=ADMIN, version=LATEST):
    return _req(stack, 'GET', '/servers/%s' % server_id, token=token,
                version=version).json()['server']


def _settled(stack, server_id, statuses, timeout=20.0):
    """The server once it has no task and shows one of ``statuses``."""
    deadline = time.monotonic() + timeout
    server: dict = {}
    while time.monotonic() < deadline:
        server = _show(stack, server_id)
        if server['OS-EXT-STS:task_state'] is None and server['status'] in statuses:
            return server
        time.sleep(0.05)
    raise AssertionError('server %s is %s/%s' % (server_id, server.get('status'),
                                                   server.get('OS-EXT-STS:task_state')))


def _conflict(resp, server_id, action, state):
    assert resp.status_code == 409, resp.text
    assert resp.json()['conflictingRequest']['message'] == (
        "Cannot '%s' instance %s while it is in vm_state %s" % (action, server_id, state))


def _events(stack, server_id, action):
    """{event name: event} of the server's latest action named ``action``."""
    path = '/servers/%s/os-instance-actions' % server_id
    actions = [a for a in _req(stack, 'GET', path, token=ADMIN).json()['instanceActions']
               if a['action'] == action]
    assert actions, 'no %s action' % action
    member = _req(stack, 'GET', '%s/%s' % (path, actions[0]['request_id']),
                  token=ADMIN).json()['instanceAction']
    return {e['event']: e for e in member['events']}


def _event_ok(stack, server_id, action, event):
    libvirt_stack.wait(lambda: _events(stack, server_id, action).get(event, {}).get(
        'finish_time') is not None)
    found = _events(stack, server_id, action)[event]
    assert found['result'] == 'Success', found
    assert found['host'] == 'ip1'


def _guest(stack, server_id):
    return stack.driver('ip1').host.get_guest(server_id)


# -- pause, suspend ------------------------------------------------------------------------

def test_pause_and_unpause(stack, server):
    _action(stack, server, {'pause': None})
    paused = _settled(stack, server, ('PAUSED',))
    assert paused['OS-EXT-STS:vm_state'] == 'paused'
    assert paused['OS-EXT-STS:power_state'] == power_state.PAUSED
    assert _guest(stack, server).get_power_state() == power_state.PAUSED
    _event_ok(stack, server, 'pause', 'compute_pause_instance')
    assert stack.usages('ip1') == USED

    _conflict(_action(stack, server, {'pause': None}, code=409), server, 'pause', 'paused')
    _conflict(_action(stack, server, {'suspend': None}, code=409), server, 'suspend',
              'paused')

    _action(stack, server, {'unpause': None})
    active = _settled(stack, server, ('ACTIVE',))
    assert active['OS-EXT-STS:power_state'] == power_state.RUNNING
    assert _guest(stack, server).get_power_state() == power_state.RUNNING
    _event_ok(stack, server, 'unpause', 'compute_unpause_instance')
    _conflict(_action(stack, server, {'unpause': None}, code=409), server, 'unpause',
              'active')


def test_suspend_and_resume(stack, server):
    _conflict(_action(stack, server, {'resume': None}, code=409), server, 'resume',
              'active')
    _action(stack, server, {'suspend': {}})
    suspended = _settled(stack, server, ('SUSPENDED',))
    assert suspended['OS-EXT-STS:power_state'] == power_state.SUSPENDED
    guest = _guest(stack, server)
    assert not guest.is_active() and guest.has_saved_state()
    _event_ok(stack, server, 'suspend', 'compute_suspend_instance')
    assert stack.usages('ip1') == USED  # a suspended server keeps its resources

    _action(stack, server, {'resume': None})
    assert _settled(stack, server, ('ACTIVE',))['OS-EXT-STS:power_state'] == \
        power_state.RUNNING
    assert _guest(stack, server).is_active()
    _event_ok(stack, server, 'resume', 'compute_resume_instance')


def test_a_failed_pause_goes_back_to_active_with_an_error_event(stack, server,
                                                                 monkeypatch):
    def pause(instance):
        raise RuntimeError('the hypervisor refused to pause')
    monkeypatch.setattr(stack.driver('ip1'), 'pause', pause)
    _action(stack, server, {'pause': None})
    libvirt_stack.wait(lambda: _events(stack, server, 'pause').get(
        'compute_pause_instance', {}).get('finish_time') is not None)
    event = _events(stack, server, 'pause')['compute_pause_instance']
    assert event['result'] == 'Error'
    assert 'refused to pause' in event['traceback']
    assert _settled(stack, server, ('ACTIVE',))['OS-EXT-STS:vm_state'] == 'active'


# -- lock ----------------------------------------------------------------------------------

def test_lock_with_a_reason_blocks_the_owner_but_not_an_admin(stack, server):
    _action(stack, server, {'lock': {'locked_reason': 'maintenance'}}, version='2.73')
    shown = _show(stack, server, token=OWNER, version='2.73')
    assert shown['locked'] is True and shown['locked_reason'] == 'maintenance'
    assert 'locked_reason' not in _show(stack, server, token=OWNER, version='2.72')
    listed = _req(stack, 'GET', '/servers/detail?locked=true', version='2.73').json()
    assert [s['id'] for s in listed['servers']] == [server]
    assert _events(stack, server, 'lock')['api_lock']['result'] == 'Success'

    message = 'Instance %s is locked' % server
    for body in ({'pause': None}, {'suspend': None}, {'rescue': None},
                 {'changePassword': {'adminPass': 'x'}}, {'trigger_crash_dump': None},
                 {'os-stop': None}, {'reboot': {'type': 'HARD'}}):
        resp = _action(stack, server, body, code=409)
        assert resp.json()['conflictingRequest']['message'] == message, body
    resp = _req(stack, 'PUT', '/servers/%s/metadata/k' % server, json={'meta': {'k': 'v'}})
    assert resp.status_code == 409 and message in resp.text
    assert _req(stack, 'DELETE', '/servers/%s' % server).status_code == 409
    # Renaming is not guarded by the lock in Nova.
    assert _req(stack, 'PUT', '/servers/%s' % server,
                json={'server': {'name': 'renamed'}}).status_code == 200

    _action(stack, server, {'pause': None}, token=ADMIN)
    _settled(stack, server, ('PAUSED',))
    _action(stack, server, {'unpause': None}, token=ADMIN)
    _settled(stack, server, ('ACTIVE',))

    _action(stack, server, {'unlock': None})
    shown = _show(stack, server, token=OWNER, version='2.73')
    assert shown['locked'] is False and shown['locked_reason'] is None
    assert _events(stack, server, 'unlock')['api_unlock']['result'] == 'Success'


def test_an_admin_lock_needs_an_admin_to_unlock(stack, server):
    _action(stack, server, {'lock': None}, token=ADMIN)
    resp = _action(stack, server, {'unlock': None}, code=403)
    assert 'os_compute_api:os-lock-server:unlock:unlock_override' in resp.text
    assert _show(stack, server)['locked'] is True
    _action(stack, server, {'unlock': None}, token=ADMIN)
    assert _show(stack, server)['locked'] is False


def test_lock_bodies(stack, server):
    _action(stack, server, {'lock': {'locked_reason': ''}}, version='2.73', code=400)
    _action(stack, server, {'lock': {'other': 1}}, version='2.73', code=400)
    # Before 2.73 the body's value is not looked at.
    _action(stack, server, {'lock': {'locked_reason': ''}}, version='2.72')
    assert _show(stack, server, version='2.73')['locked_reason'] is None
    _action(stack, server, {'unlock': None})


# -- rescue --------------------------------------------------------------------------------

def _disks(guest):
    import xml.etree.ElementTree as ET
    return [(d.find('target').get('dev'), os.path.basename(d.find('source').get('file')))
            for d in ET.fromstring(guest.persistent_xml()).iter('disk')]


def test_rescue_boots_the_rescue_disk_with_the_root_disk_second(stack, server):
    instance_dir = os.path.join(stack.driver('ip1').instances_path, server)
    assert _disks(_guest(stack, server)) == [('vda', 'disk')]
    resp = _action(stack, server, {'rescue': {'adminPass': 's3cret'}}, code=200)
    assert resp.json() == {'adminPass': 's3cret'}
    rescued = _settled(stack, server, ('RESCUE',))
    assert rescued['OS-EXT-STS:vm_state'] == 'rescued'
    assert rescued['OS-EXT-STS:power_state'] == power_state.RUNNING
    guest = _guest(stack, server)
    assert guest.is_active()
    assert _disks(guest) == [('vda', 'disk.rescue'), ('vdb', 'disk')]
    assert os.path.exists(os.path.join(instance_dir, 'unrescue.xml'))
    _event_ok(stack, server, 'rescue', 'compute_rescue_instance')
    assert stack.usages('ip1') == USED

    _conflict(_action(stack, server, {'rescue': None}, code=409), server, 'rescue',
              'rescued')
    _conflict(_action(stack, server, {'pause': None}, code=409), server, 'pause',
              'rescued')
    _action(stack, server, {'unrescue': None})
    active = _settled(stack, server, ('ACTIVE',))
    assert active['OS-EXT-STS:power_state'] == power_state.RUNNING
    assert _disks(_guest(stack, server)) == [('vda', 'disk')]
    assert not os.path.exists(os.path.join(instance_dir, 'unrescue.xml'))
    assert not os.path.exists(os.path.join(instance_dir, 'disk.rescue'))
    _event_ok(stack, server, 'unrescue', 'compute_unrescue_instance')
    _conflict(_action(stack, server, {'unrescue': None}, code=409), server, 'unrescue',
              'active')


def test_rescue_of_a_stopped_server_with_another_image(stack, server):
    other = stack.glance.add_image(b'\0' * 4096, disk_format='raw', name='rescue-img')
    _action(stack, server, {'os-stop': None})
    _settled(stack, server, ('SHUTOFF',))
    resp = _action(stack, server, {'rescue': {'rescue_image_ref': other['id']}}, code=200)
    assert len(resp.json()['adminPass']) >= 8  # generated
    _settled(stack, server, ('RESCUE',))
    assert _guest(stack, server).is_active()
    _action(stack, server, {'unrescue': None})
    assert _settled(stack, server, ('ACTIVE',))['OS-EXT-STS:power_state'] == \
        power_state.RUNNING


def test_rescue_with_a_bad_image(stack, server):
    # Nova 34's schema takes an image uuid only.
    resp = _action(stack, server, {'rescue': {'rescue_image_ref': 'nope'}}, code=400)
    assert "'nope' is not a 'uuid'" in resp.text
    missing = '8f1b7f4e-0b7e-4c3a-9a5e-3f7d2b1c0a99'
    resp = _action(stack, server, {'rescue': {'rescue_image_ref': missing}}, code=400)
    assert "Requested rescue image '%s' is not supported" % missing in resp.text
    assert _show(stack, server)['status'] == 'ACTIVE'


# -- reset state, password, crash dump -----------------------------------------------------

def test_reset_state_is_for_admins(stack, server):
    _action(stack, server, {'os-resetState': {'state': 'error'}}, code=403)
    _action(stack, server, {'os-resetState': {'state': 'stopped'}}, token=ADMIN, code=400)
    _action(stack, server, {'os-resetState': {'state': 'error'}}, token=ADMIN)
    assert _show(stack, server)['OS-EXT-STS:vm_state'] == 'error'
    assert 'resetState' in [a['action'] for a in _req(
        stack, 'GET', '/servers/%s/os-instance-actions' % server,
        token=ADMIN).json()['instanceActions']]
    _action(stack, server, {'os-resetState': {'state': 'active'}}, token=ADMIN)
    assert _show(stack, server)['status'] == 'ACTIVE'


def test_change_password_needs_the_guest_agent(stack, server):
    resp = _action(stack, server, {'changePassword': {'adminPass': 'pw'}}, code=409)
    assert resp.json()['conflictingRequest']['message'] == 'QEMU guest agent is not enabled'
    after = _show(stack, server)
    assert (after['status'], after['OS-EXT-STS:task_state']) == ('ACTIVE', None)
    assert _events(stack, server, 'changePassword')[
        'compute_set_admin_password']['result'] == 'Error'
    _action(stack, server, {'changePassword': {}}, code=400)


def test_change_password_through_the_agent(stack, flavor):
    image = stack.glance.add_image(b'\0' * 4096, disk_format='raw', name='agent-img',
                                   hw_qemu_guest_agent='yes')
    server_id = _boot(stack, flavor, image)
    try:
        _action(stack, server_id, {'changePassword': {'adminPass': 'pw'}})
        assert _show(stack, server_id)['OS-EXT-STS:task_state'] is None
        _event_ok(stack, server_id, 'changePassword', 'compute_set_admin_password')
        _action(stack, server_id, {'os-stop': None})
        _settled(stack, server_id, ('SHUTOFF',))
        _conflict(_action(stack, server_id, {'changePassword': {'adminPass': 'pw'}},
                          code=409), server_id, 'changePassword', 'stopped')
    finally:
        stack.delete_all([server_id])


def test_trigger_crash_dump(stack, server):
    _action(stack, server, {'trigger_crash_dump': None}, version='2.16', code=404)
    _action(stack, server, {'trigger_crash_dump': {}}, code=400)
    _action(stack, server, {'trigger_crash_dump': None})
    _event_ok(stack, server, 'trigger_crash_dump', 'compute_trigger_crash_dump')
    assert _show(stack, server)['status'] == 'ACTIVE'
    _action(stack, server, {'os-stop': None})
    _settled(stack, server, ('SHUTOFF',))
    _conflict(_action(stack, server, {'trigger_crash_dump': None}, code=409), server,
              'trigger_crash_dump', 'stopped')


# -- soft delete ---------------------------------------------------------------------------

@pytest.fixture
def reclaim():
    CONF.set_override('reclaim_instance_interval', 3600)
    try:
        yield
    finally:
        CONF.clear_override('reclaim_instance_interval')


def _reclaim(stack, interval):
    mgr = stack.computes['ip1'].manager
    with obj_base.indirection(mgr._indirection_api):
        return deferred_delete.reclaim_queued_deletes(
            mgr, nl_context.get_admin_context(), interval)


def test_soft_delete_restore_and_force_delete(stack, server, reclaim):
    assert _req(stack, 'DELETE', '/servers/%s' % server).status_code == 204
    deleted = _settled(stack, server, ('SOFT_DELETED',))
    assert deleted['OS-EXT-STS:power_state'] == power_state.SHUTDOWN
    assert not _guest(stack, server).is_active()
    assert stack.usages('ip1') == USED  # the allocation is kept for a restore
    _event_ok(stack, server, 'delete', 'compute_soft_delete_instance')
    _conflict(_action(stack, server, {'pause': None}, code=409), server, 'pause',
              'soft-delete')

    _action(stack, server, {'restore': None})
    restored = _settled(stack, server, ('ACTIVE',))
    assert restored['OS-EXT-STS:power_state'] == power_state.RUNNING
    assert _guest(stack, server).is_active()
    _event_ok(stack, server, 'restore', 'compute_restore_instance')
    _conflict(_action(stack, server, {'restore': None}, code=409), server, 'restore',
              'active')

    assert _req(stack, 'DELETE', '/servers/%s' % server).status_code == 204
    _settled(stack, server, ('SOFT_DELETED',))
    _action(stack, server, {'forceDelete': None})
    stack.wait_for_deleted(server)
    assert stack.usages('ip1') == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}


def test_reclaim_deletes_old_soft_deleted_servers_only(stack, server, reclaim):
    assert _req(stack, 'DELETE', '/servers/%s' % server).status_code == 204
    _settled(stack, server, ('SOFT_DELETED',))
    assert _reclaim(stack, 3600) == []  # not old enough yet
    assert _show(stack, server)['status'] == 'SOFT_DELETED'
    # The guest's power-off event may still hold the instance lock for a moment: the
    # periodic task then leaves the server to its next run.
    deadline = time.monotonic() + 10
    reclaimed = _reclaim(stack, 0)
    while not reclaimed and time.monotonic() < deadline:
        time.sleep(0.05)
        reclaimed = _reclaim(stack, 0)
    assert reclaimed == [server]
    stack.wait_for_deleted(server)
    assert stack.usages('ip1') == {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    with pytest.raises(exception.InstanceNotFound):
        _guest(stack, server)


def test_a_locked_soft_deleted_server(stack, server, reclaim):
    assert _req(stack, 'DELETE', '/servers/%s' % server).status_code == 204
    _settled(stack, server, ('SOFT_DELETED',))
    _action(stack, server, {'lock': None}, token=ADMIN)
    assert _action(stack, server, {'restore': None}, code=409).json()[
        'conflictingRequest']['message'] == 'Instance %s is locked' % server
    _action(stack, server, {'restore': None}, token=ADMIN)
    _settled(stack, server, ('ACTIVE',))


# -- notifications -------------------------------------------------------------------------

@pytest.fixture
def notified():
    with notifier.kept():
        yield


def _notifications(server_id):
    return [(m['event_type'], m['publisher_id'])
            for _ctx, m, _priority, _retry in list(_impl_test.NOTIFICATIONS)
            if m['payload']['nova_object.data']['uuid'] == server_id]


def test_notifications(stack, server, notified):
    _action(stack, server, {'lock': None})
    _action(stack, server, {'unlock': None})
    _action(stack, server, {'suspend': None})
    _settled(stack, server, ('SUSPENDED',))
    _action(stack, server, {'resume': None})
    _settled(stack, server, ('ACTIVE',))
    _action(stack, server, {'trigger_crash_dump': None})
    wanted = ['instance.lock', 'instance.unlock', 'instance.suspend.start',
              'instance.suspend.end', 'instance.resume.start', 'instance.resume.end',
              'instance.trigger_crash_dump.start', 'instance.trigger_crash_dump.end']
    # instance.create.end may come after the server shows ACTIVE: left out.
    libvirt_stack.wait(lambda: [n for n, _ in _notifications(server)
                                if not n.startswith('instance.create.')] == wanted)
    publishers = dict(_notifications(server))
    assert publishers['instance.lock'].startswith('novalite-api:')
    assert publishers['instance.suspend.end'] == 'novalite-compute:ip1'
