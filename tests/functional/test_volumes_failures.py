"""Volumes on the failure paths: Cinder unreachable or failing during a boot from volume,
a build that fails on its host, no valid host, a delete while the server is still a
build request, and Cinder down during a delete. Every path ends with no volume left
reserved or attaching, no attachment of a server that does not use it, and the volumes
novalite made deleted."""
from __future__ import annotations

import socket

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import api as compute_api
from novalite.compute import block_devices
from novalite.conf import CONF
from tests.functional import volume_stack
from tests.functional.test_lost_builds import LostCast
from tests.functional.volume_stack import boot, boot_active, delete, fault, wait

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


def _dead_endpoint():
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return 'http://127.0.0.1:%d/v3' % port


@pytest.fixture
def cinder_down(cinder):
    """Call ``cinder_down()`` to make Cinder unreachable; it is back after the test
    (or on ``cinder_down(False)``)."""
    def switch(down=True):
        CONF.set_override('endpoint_template', _dead_endpoint() if down else
                          cinder.url + '/v3', group='cinder')
    yield switch
    switch(False)


@pytest.fixture
def clean(cinder):
    """After the test: nothing reserved or attaching, no fault left to inject."""
    yield
    cinder.faults.clear()
    assert not [v for v in cinder.volumes.values()
                if v['status'] in ('reserved', 'attaching', 'detaching')], cinder.volumes


def _root_volume(volume_id, **extra):
    return dict({'source_type': 'volume', 'destination_type': 'volume', 'uuid': volume_id,
                 'boot_index': 0}, **extra)


def _image_volume(stack, **extra):
    return dict({'source_type': 'image', 'destination_type': 'volume',
                 'uuid': stack.image['id'], 'boot_index': 0, 'volume_size': 1,
                 'delete_on_termination': True}, **extra)


def _error(stack, resp):
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                   version='2.79')
    assert server['status'] == 'ERROR', server
    return server


def test_cinder_unreachable_during_a_boot_from_image_volume(stack, cinder, flavor,
                                                            cinder_down, clean):
    volumes = set(cinder.volumes)
    cinder_down()
    server = _error(stack, boot(stack, flavor, [_image_volume(stack)], image=False))
    cinder_down(False)
    message = server['fault']['message']
    assert 'Cinder' in message, message
    assert set(cinder.volumes) == volumes
    assert cinder.attachments_of(server['id']) == []
    delete(stack, server['id'])


def test_cinder_failing_the_attachment_deletes_the_volume_novalite_made(
        stack, cinder, flavor, clean):
    volumes = set(cinder.volumes)
    cinder.fail_next(503, 'cinder-volume is gone', path='/v3/attachments')
    server = _error(stack, boot(stack, flavor, [_image_volume(stack)], image=False))
    assert 'cinder-volume is gone' in server['fault']['message'], server['fault']
    assert set(cinder.volumes) == volumes, 'the volume made for the server is deleted'
    assert cinder.attachments_of(server['id']) == []
    # No volume to list (Nova lists only mappings with a volume).
    listed = stack.request('GET', '/servers/%s/os-volume_attachments' % server['id'])
    assert listed.json() == {'volumeAttachments': []}
    delete(stack, server['id'])
    assert set(cinder.volumes) == volumes


def test_cinder_failing_the_attach_of_a_user_volume_lets_it_go(stack, cinder, flavor,
                                                               clean):
    volume = cinder.add_volume()
    cinder.fail_next(503, 'no export', path='/v3/attachments/')
    server = _error(stack, boot(stack, flavor, [_root_volume(volume['id'])], image=False))
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []
    delete(stack, server['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'


def _filler(stack, flavor):
    resp = stack.request('POST', '/servers', version='2.74', json={'server': {
        'name': 'filler', 'imageRef': stack.image['id'], 'networks': 'none',
        'flavorRef': flavor, 'host': 'host2'}})
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


def test_a_build_failing_on_its_host_is_rescheduled_with_a_new_attachment(
        stack, cinder, flavor, clean):
    filler = _filler(stack, flavor)
    volume = cinder.add_volume()
    CONF.set_override('fail_spawn_on_hosts', ['host1'], group='fake_driver')
    try:
        server = boot_active(stack, flavor, [_root_volume(volume['id'])], image=False)
    finally:
        CONF.clear_override('fail_spawn_on_hosts', group='fake_driver')
    assert server['OS-EXT-SRV-ATTR:host'] == 'host2'
    (attachment,) = cinder.attachments_of(server['id'])
    assert attachment['connector']['host'] == 'host2'
    assert attachment['status'] == 'attached'
    assert cinder.volumes[volume['id']]['status'] == 'in-use'
    # host1's attachment (the API's reservation, given host1's connector) was deleted.
    deleted = [s.path.rsplit('/', 1)[1] for s in cinder.requests('DELETE')
               if '/attachments/' in s.path]
    assert deleted and attachment['id'] not in deleted
    delete(stack, server['id'])
    delete(stack, filler['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_a_build_failing_on_every_host_ends_in_error_with_the_volume_available(
        stack, cinder, flavor, clean):
    volume = cinder.add_volume()
    CONF.set_override('fail_spawn_on_hosts', ['host1', 'host2'], group='fake_driver')
    try:
        server = _error(stack, boot(stack, flavor, [_root_volume(volume['id'])],
                                    image=False))
    finally:
        CONF.clear_override('fail_spawn_on_hosts', group='fake_driver')
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []
    delete(stack, server['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_no_valid_host_with_a_user_volume(stack, cinder, clean):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.too-big', 'ram': 40000, 'vcpus': 1, 'disk': 1}})
    huge = resp.json()['flavor']['id']
    volume = cinder.add_volume()
    server = _error(stack, boot(stack, huge, [_root_volume(volume['id'])], image=False))
    assert 'No valid host' in server['fault']['message'], server['fault']
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []
    assert server['os-extended-volumes:volumes_attached'] == [
        {'id': volume['id'], 'delete_on_termination': False}]
    delete(stack, server['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []


def test_delete_of_a_build_request_deletes_its_reservation(stack, cinder, flavor, clean):
    volume = cinder.add_volume()
    ctxt = nl_context.RequestContext(user_id='admin', project_id='admin',
                                     roles=['admin', 'member', 'reader'], is_admin=True,
                                     overwrite=False)
    api = compute_api.API(compute_task_api=LostCast())
    flavor = objects.Flavor.get_by_name(ctxt, 'm1.volumes')
    (instance,), _ = api.create(ctxt, flavor, None, name='never-taken',
                                block_device_mapping=[{
                                    'source_type': 'volume', 'destination_type': 'volume',
                                    'volume_id': volume['id'], 'boot_index': 0,
                                    'delete_on_termination': False, 'volume_size': None}])
    (reservation,) = cinder.attachments_of(instance.uuid)
    assert cinder.volumes[volume['id']]['status'] == 'reserved'
    delete(stack, instance.uuid)
    assert reservation['id'] not in cinder.attachments
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_cinder_down_during_delete_leaves_it_deleting_until_cinder_is_back(
        stack, cinder, flavor, cinder_down, clean, monkeypatch):
    monkeypatch.setattr(block_devices, 'DELETE_RETRIES', 1)
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_root_volume(volume['id'])], image=False)
    server_id = server['id']
    svc = stack.computes[server['OS-EXT-SRV-ATTR:host']]
    mgr = svc.manager

    cinder_down()
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    # The guest goes first, under the instance's lock; the lock is let go once the
    # delete gave up on Cinder.
    wait(lambda: server_id not in mgr.driver.list_instance_uuids()
         and not mgr.instance_lock(server_id).locked())
    shown = stack.request('GET', '/servers/%s' % server_id, version='2.79')
    assert shown.status_code == 200
    assert shown.json()['server']['OS-EXT-STS:task_state'] == 'deleting'
    assert cinder.volumes[volume['id']]['status'] == 'in-use'

    # Cinder is back: the host's pending delete task finishes the delete.
    cinder_down(False)
    CONF.set_override('pending_delete_grace', 0, group='compute')
    try:
        svc._call(mgr._retry_pending_deletes, nl_context.get_admin_context())
    finally:
        CONF.clear_override('pending_delete_grace', group='compute')
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 404
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server_id) == []


def test_no_valid_host_with_an_image_volume_shows_no_volume(stack, cinder, clean):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.too-big-too', 'ram': 40000, 'vcpus': 1, 'disk': 1}})
    huge = resp.json()['flavor']['id']
    volumes = set(cinder.volumes)
    server = _error(stack, boot(stack, huge, [_image_volume(stack)], image=False))
    try:
        assert server['image'] == ''
        assert server['os-extended-volumes:volumes_attached'] == []
    finally:
        delete(stack, server['id'])
    assert set(cinder.volumes) == volumes


def test_cinder_unreachable_at_the_api(stack, cinder, flavor, cinder_down, clean):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, name='api-outage')
    attached = cinder.add_volume()
    resp = stack.request('POST', '/servers/%s/os-volume_attachments' % server['id'],
                         json={'volumeAttachment': {'volumeId': attached['id']}})
    assert resp.status_code == 200, resp.text
    wait(lambda: cinder.volumes[attached['id']]['status'] == 'in-use')
    cinder_down()
    try:
        resp = stack.request('DELETE', '/servers/%s/os-volume_attachments/%s' % (
            server['id'], attached['id']))
        assert 'Cinder' in fault(resp, 503)
        resp = boot(stack, flavor, [_root_volume(volume['id'])], image=False)
        assert 'Cinder' in fault(resp, 503)
        resp = stack.request('POST', '/servers/%s/os-volume_attachments' % server['id'],
                             json={'volumeAttachment': {'volumeId': volume['id']}})
        assert 'Cinder' in fault(resp, 503)
    finally:
        cinder_down(False)
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.volumes[attached['id']]['status'] == 'in-use'
    listed = stack.request('GET', '/servers/%s/os-volume_attachments' % server['id'])
    assert [a['volumeId'] for a in listed.json()['volumeAttachments']] == [attached['id']]
    delete(stack, server['id'])
    assert cinder.volumes[attached['id']]['status'] == 'available'


def test_a_volume_cinder_makes_slowly_is_waited_for(stack, cinder, flavor, clean,
                                                     monkeypatch):
    monkeypatch.setattr(cinder, 'settle_after', 3)
    server = boot_active(stack, flavor, [_image_volume(stack)], image=False)
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert cinder.volumes[volume_id]['status'] == 'in-use'
    delete(stack, server['id'])
    assert volume_id not in cinder.volumes


def test_a_volume_cinder_fails_to_make_fails_the_build(stack, cinder, flavor, clean):
    volumes = set(cinder.volumes)
    user = cinder.add_volume()
    cinder.errors_next = 1
    server = _error(stack, boot(stack, flavor, [
        _image_volume(stack),
        {'source_type': 'volume', 'destination_type': 'volume', 'uuid': user['id']}],
        image=False))
    assert 'did not finish being created' in server['fault']['message'], server['fault']
    assert set(cinder.volumes) == volumes | {user['id']}, 'the volume in error deleted'
    assert cinder.volumes[user['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []
    delete(stack, server['id'])
    assert cinder.volumes[user['id']]['status'] == 'available'


def test_cinder_failing_the_attachment_delete_leaves_the_delete_pending(
        stack, cinder, flavor, clean, monkeypatch):
    """Unlike Nova (which ignores Cinder's errors there and leaves the attachment
    behind), a delete whose attachment Cinder will not delete stays DELETING; the
    pending delete task finishes it once Cinder does."""
    monkeypatch.setattr(block_devices, 'DELETE_RETRIES', 1)
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_root_volume(volume['id'])], image=False)
    server_id = server['id']
    svc = stack.computes[server['OS-EXT-SRV-ATTR:host']]
    mgr = svc.manager
    cinder.fail_next(500, 'backend broke', count=1000, path='/v3/attachments/')
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    wait(lambda: server_id not in mgr.driver.list_instance_uuids()
         and not mgr.instance_lock(server_id).locked())
    shown = stack.request('GET', '/servers/%s' % server_id).json()['server']
    assert shown['OS-EXT-STS:task_state'] == 'deleting'
    assert [a['volume_id'] for a in cinder.attachments_of(server_id)] == [volume['id']]

    cinder.faults.clear()
    CONF.set_override('pending_delete_grace', 0, group='compute')
    try:
        svc._call(mgr._retry_pending_deletes, nl_context.get_admin_context())
    finally:
        CONF.clear_override('pending_delete_grace', group='compute')
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 404
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server_id) == []
