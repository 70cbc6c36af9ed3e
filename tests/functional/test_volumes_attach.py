"""os-volume_attachments end to end: attach, list/show by microversion, update, detach,
and what is refused (swap, a volume in use elsewhere, the root volume, a locked server),
with Cinder's side checked through the double and the guest's through the fake driver."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import objects
from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, driver, fault, wait

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


@pytest.fixture
def server(stack, flavor):
    server = boot_active(stack, flavor, name='attach-vm')
    yield server
    if stack.request('GET', '/servers/%s' % server['id']).status_code == 200:
        stack.request('POST', '/servers/%s/action' % server['id'], json={'unlock': None})
        delete(stack, server['id'])


def _path(server_id, volume_id=None):
    path = '/servers/%s/os-volume_attachments' % server_id
    return path + '/' + volume_id if volume_id else path


def _attach(stack, server_id, volume_id, version='2.79', **extra):
    return stack.request('POST', _path(server_id), version=version, json={
        'volumeAttachment': dict({'volumeId': volume_id}, **extra)})


def _attached(stack, cinder, server_id, volume_id):
    resp = _attach(stack, server_id, volume_id)
    assert resp.status_code == 200, resp.text
    wait(lambda: cinder.volumes[volume_id]['status'] == 'in-use')
    return resp.json()['volumeAttachment']


def _listed(stack, server_id, version='2.79'):
    resp = stack.request('GET', _path(server_id), version=version)
    assert resp.status_code == 200, resp.text
    return resp.json()['volumeAttachments']


def test_attach_list_show_and_detach(stack, cinder, server):
    server_id = server['id']
    volume = cinder.add_volume()
    attachment = _attached(stack, cinder, server_id, volume['id'])
    assert attachment == {'id': volume['id'], 'serverId': server_id,
                          'volumeId': volume['id'], 'device': '/dev/vdb', 'tag': None,
                          'delete_on_termination': False}
    (held,) = cinder.attachments_of(server_id)
    assert held['status'] == 'attached' and held['volume_id'] == volume['id']
    guest = driver(stack, server).volumes(server_id)
    assert guest['/dev/vdb']['serial'] == volume['id']
    assert guest['/dev/vdb']['attachment_id'] == held['id']

    base = {'serverId': server_id, 'volumeId': volume['id'], 'device': '/dev/vdb'}
    assert _listed(stack, server_id, '2.1') == [dict(base, id=volume['id'])]
    assert _listed(stack, server_id, '2.70') == [dict(base, id=volume['id'], tag=None)]
    assert _listed(stack, server_id, '2.79') == [dict(base, id=volume['id'], tag=None,
                                                      delete_on_termination=False)]
    (newest,) = _listed(stack, server_id, '2.89')
    assert newest['attachment_id'] == held['id'] and 'id' not in newest
    assert newest == dict(base, tag=None, delete_on_termination=False,
                          attachment_id=held['id'], bdm_uuid=newest['bdm_uuid'])
    assert _listed(stack, server_id, 'latest') == [newest]
    for version, listed in (('2.1', dict(base, id=volume['id'])), ('2.89', newest)):
        shown = stack.request('GET', _path(server_id, volume['id']), version=version)
        assert shown.status_code == 200, shown.text
        assert shown.json()['volumeAttachment'] == listed
    shown = stack.request('GET', '/servers/%s' % server_id, version='2.79').json()['server']
    assert shown['os-extended-volumes:volumes_attached'] == [
        {'id': volume['id'], 'delete_on_termination': False}]

    resp = stack.request('DELETE', _path(server_id, volume['id']), version='2.79')
    assert resp.status_code == 202, resp.text
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'available')
    assert cinder.attachments_of(server_id) == []
    wait(lambda: _listed(stack, server_id) == [])
    assert driver(stack, server).volumes(server_id) == {}


def test_update_delete_on_termination_from_2_85_and_swap_for_admins_only(stack, cinder, server):
    server_id = server['id']
    volume = cinder.add_volume()
    other = cinder.add_volume()
    _attached(stack, cinder, server_id, volume['id'])
    path = _path(server_id, volume['id'])

    resp = stack.request('PUT', path, version='2.85', json={'volumeAttachment': {
        'volumeId': volume['id'], 'delete_on_termination': True}})
    assert resp.status_code == 202, resp.text
    (listed,) = _listed(stack, server_id)
    assert listed['delete_on_termination'] is True
    # Before 2.85 a PUT only swaps.
    resp = stack.request('PUT', path, version='2.84', json={'volumeAttachment': {
        'volumeId': volume['id'], 'delete_on_termination': False}})
    assert resp.status_code == 400, resp.text
    # A swap (test_volumes_swap.py) is for administrators and services only.
    for version in ('2.1', '2.85'):
        resp = stack.request('PUT', path, version=version, token='alice:admin', json={
            'volumeAttachment': {'volumeId': other['id']}})
        assert resp.status_code == 403, resp.text
    assert cinder.volumes[other['id']]['status'] == 'available'
    assert cinder.volumes[volume['id']]['status'] == 'in-use'

    # delete_on_termination now set: the delete deletes the volume.
    delete(stack, server_id)
    assert volume['id'] not in cinder.volumes


def test_attach_of_a_volume_in_use_elsewhere_is_refused(stack, cinder, flavor, server):
    volume = cinder.add_volume()
    _attached(stack, cinder, server['id'], volume['id'])
    other = boot_active(stack, flavor, name='other-vm')
    try:
        message = fault(_attach(stack, other['id'], volume['id']), 400)
        assert volume['id'] in message
        assert cinder.attachments_of(other['id']) == []
        assert _listed(stack, other['id']) == []
    finally:
        delete(stack, other['id'])
    assert cinder.volumes[volume['id']]['status'] == 'in-use'


def test_attach_the_driver_fails_lets_the_volume_go_and_records_the_error(
        stack, cinder, server):
    server_id = server['id']
    volume = cinder.add_volume()
    drv = driver(stack, server)
    drv.fail_attach_volume_ids.add(volume['id'])
    try:
        resp = _attach(stack, server_id, volume['id'])
        assert resp.status_code == 200, resp.text
        wait(lambda: not cinder.attachments_of(server_id))
    finally:
        drv.fail_attach_volume_ids.discard(volume['id'])
    wait(lambda: _listed(stack, server_id) == [])
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert drv.volumes(server_id) == {}

    actions = stack.request('GET', '/servers/%s/os-instance-actions' % server_id,
                            version='2.51').json()['instanceActions']
    (action,) = [a for a in actions if a['action'] == 'attach_volume']

    def event():
        detail = stack.request('GET', '/servers/%s/os-instance-actions/%s' % (
            server_id, action['request_id']), version='2.51').json()['instanceAction']
        (found,) = detail['events']
        return found
    # The host records the error once Cinder's side is undone.
    wait(lambda: event()['result'] is not None)
    assert event()['event'] == 'compute_attach_volume' and event()['result'] == 'Error'
    ctxt = nl_context.get_admin_context()
    # The fault is written just after the event's error.
    wait(lambda: objects.InstanceFault.get_latest_for_instance(ctxt, server_id))
    latest = objects.InstanceFault.get_latest_for_instance(ctxt, server_id)
    assert latest is not None
    assert 'fake driver told to fail its attach' in latest.message, latest.message
    # The server is still ACTIVE and takes the volume once the driver does.
    _attached(stack, cinder, server_id, volume['id'])


def test_detach_refusals(stack, cinder, flavor, server):
    server_id = server['id']
    missing = '5b0e3d1e-95a4-4e53-8d8e-0c4c8f5a1f70'
    resp = stack.request('DELETE', _path(server_id, missing))
    assert missing in fault(resp, 404)

    root = cinder.add_volume()
    backed = boot_active(stack, flavor, [{
        'source_type': 'volume', 'destination_type': 'volume', 'uuid': root['id'],
        'boot_index': 0}], image=False, name='backed-vm')
    try:
        resp = stack.request('DELETE', _path(backed['id'], root['id']))
        assert "Can't detach root device volume" in fault(resp, 400)
        assert cinder.volumes[root['id']]['status'] == 'in-use'
    finally:
        delete(stack, backed['id'])


def test_a_locked_server_refuses_attach_and_detach(stack, cinder, flavor):
    owner = 'alice:alpha'
    resp = stack.request('POST', '/servers', token=owner, version='2.79', json={'server': {
        'name': 'locked-vm', 'imageRef': stack.image['id'], 'flavorRef': flavor,
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    assert stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'))['status'] == 'ACTIVE'
    volume = cinder.add_volume()
    spare = cinder.add_volume()
    try:
        resp = _attach(stack, server_id, volume['id'])
        assert resp.status_code == 200, resp.text
        wait(lambda: cinder.volumes[volume['id']]['status'] == 'in-use')
        resp = stack.request('POST', '/servers/%s/action' % server_id, token=owner,
                             json={'lock': None})
        assert resp.status_code == 202, resp.text

        resp = stack.request('POST', _path(server_id), version='2.79', token=owner,
                             json={'volumeAttachment': {'volumeId': spare['id']}})
        assert 'locked' in fault(resp, 409)
        resp = stack.request('DELETE', _path(server_id, volume['id']), token=owner)
        assert 'locked' in fault(resp, 409)
        assert cinder.volumes[spare['id']]['status'] == 'available'
        assert cinder.volumes[volume['id']]['status'] == 'in-use'
        assert [a['volume_id'] for a in cinder.attachments_of(server_id)] == [volume['id']]
    finally:
        stack.request('POST', '/servers/%s/action' % server_id, json={'unlock': None})
        delete(stack, server_id)
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_a_driver_failing_the_detach_keeps_the_volume_attached(stack, cinder, server):
    server_id = server['id']
    volume = cinder.add_volume()
    _attached(stack, cinder, server_id, volume['id'])
    drv = driver(stack, server)
    drv.fail_detach_volume_ids.add(volume['id'])
    try:
        resp = stack.request('DELETE', _path(server_id, volume['id']))
        assert resp.status_code == 202, resp.text
        actions = stack.request('GET', '/servers/%s/os-instance-actions' % server_id,
                                version='2.51').json()['instanceActions']
        (action,) = [a for a in actions if a['action'] == 'detach_volume']

        def result():
            detail = stack.request('GET', '/servers/%s/os-instance-actions/%s' % (
                server_id, action['request_id']), version='2.51').json()['instanceAction']
            return [e['result'] for e in detail['events']]
        wait(lambda: result() == ['Error'])
    finally:
        drv.fail_detach_volume_ids.discard(volume['id'])
    assert cinder.volumes[volume['id']]['status'] == 'in-use'
    assert [a['volume_id'] for a in cinder.attachments_of(server_id)] == [volume['id']]
    assert [a['volumeId'] for a in _listed(stack, server_id)] == [volume['id']]
    assert list(drv.volumes(server_id)) == ['/dev/vdb']
    # The driver lets go now: the detach goes through.
    assert stack.request('DELETE', _path(server_id, volume['id'])).status_code == 202
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'available')


def test_attach_names_the_next_free_devices_and_keeps_the_tag(stack, cinder, flavor):
    data = cinder.add_volume()
    server = boot_active(stack, flavor, [
        {'source_type': 'volume', 'destination_type': 'volume', 'uuid': data['id'],
         'tag': 'data'},
        {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
         'delete_on_termination': True}], version='2.79')
    server_id = server['id']
    try:
        listed = _listed(stack, server_id, '2.79')
        assert [(a['device'], a['tag']) for a in listed] == [('/dev/vdb', 'data'),
                                                             ('/dev/vdc', None)]
        third = cinder.add_volume()
        resp = _attach(stack, server_id, third['id'], tag='logs')
        assert resp.status_code == 200, resp.text
        assert resp.json()['volumeAttachment']['device'] == '/dev/vdd'
        assert resp.json()['volumeAttachment']['tag'] == 'logs'
        wait(lambda: cinder.volumes[third['id']]['status'] == 'in-use')
        assert sorted(driver(stack, server).volumes(server_id)) == [
            '/dev/vdb', '/dev/vdc', '/dev/vdd']
        paged = stack.request('GET', _path(server_id) + '?limit=1&offset=1',
                              version='2.79').json()['volumeAttachments']
        assert [a['device'] for a in paged] == ['/dev/vdc']
    finally:
        delete(stack, server_id)
    assert cinder.volumes[data['id']]['status'] == 'available'
    assert cinder.volumes[third['id']]['status'] == 'available'


def test_attach_at_a_requested_free_device(stack, cinder, server):
    volume = cinder.add_volume()
    resp = _attach(stack, server['id'], volume['id'], device='/dev/vdf')
    assert resp.status_code == 200, resp.text
    assert resp.json()['volumeAttachment']['device'] == '/dev/vdf'
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'in-use')
    assert list(driver(stack, server).volumes(server['id'])) == ['/dev/vdf']


def test_attach_and_show_of_unknown_volumes(stack, cinder, server):
    missing = 'e1f5d0c4-3b2a-4f19-8e7d-6c5b4a392817'
    assert missing in fault(_attach(stack, server['id'], missing), 404)
    resp = stack.request('GET', _path(server['id'], missing))
    assert resp.status_code == 404, resp.text
