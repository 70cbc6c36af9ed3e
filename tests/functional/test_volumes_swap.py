"""Swapping a server's volume (os-volume_attachments PUT with another volume) end to
end with the Cinder double and the fake driver. As in Nova 34, only a volume Cinder
migrates (its ``migration_status`` set) is swapped, anything else is refused with 409
before the new volume is looked at. A swap Cinder asked for (``migrating`` or
``retyping``) ends with its completion call and the server keeps the id Cinder answers;
a volume with an older migration status (``success``) is let through as Nova does, and
then the mapping, both attachments and the guest move to the new volume. Nova's other
refusals leave both volumes as they were; a driver that fails the swap leaves the
server on the old volume with the error recorded."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, driver, fault, wait

cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


@pytest.fixture
def server(stack, flavor):
    server = boot_active(stack, flavor, name='swap-vm')
    yield server
    if stack.request('GET', '/servers/%s' % server['id']).status_code == 200:
        delete(stack, server['id'])


def _path(server_id, volume_id=None):
    path = '/servers/%s/os-volume_attachments' % server_id
    return path + '/' + volume_id if volume_id else path


def _attached(stack, cinder, server_id, size=1, **extra):
    volume = cinder.add_volume(size=size)
    resp = stack.request('POST', _path(server_id), version='2.79', json={
        'volumeAttachment': dict({'volumeId': volume['id']}, **extra)})
    assert resp.status_code == 200, resp.text
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'in-use')
    return volume


def _swap(stack, server_id, old_id, new_id, version='2.1', token='admin:admin', **extra):
    return stack.request('PUT', _path(server_id, old_id), version=version, token=token,
                         json={'volumeAttachment': dict({'volumeId': new_id}, **extra)})


def _migrating(cinder, volume, status='migrating'):
    """The old volume as Cinder shows it (to an administrator) while it migrates."""
    cinder.volumes[volume['id']]['migration_status'] = status
    return volume


def _listed(stack, server_id):
    resp = stack.request('GET', _path(server_id), version='2.89')
    assert resp.status_code == 200, resp.text
    return resp.json()['volumeAttachments']


def _swap_events(stack, server_id):
    """The results of the events of the server's swap_volume actions."""
    actions = stack.request('GET', '/servers/%s/os-instance-actions' % server_id,
                            version='2.51').json()['instanceActions']
    results = []
    for action in actions:
        if action['action'] != 'swap_volume':
            continue
        detail = stack.request('GET', '/servers/%s/os-instance-actions/%s' % (
            server_id, action['request_id']), version='2.51').json()['instanceAction']
        results += [(e['event'], e['result']) for e in detail['events']]
    return results


def _bdm(server_id, volume_id):
    return objects.BlockDeviceMapping.get_by_volume_and_instance(
        nl_context.get_admin_context(), volume_id, server_id)


def _unchanged(stack, cinder, server, old, new):
    """The server still has ``old`` (in use, its attachment and mapping) and ``new``
    is available without any attachment."""
    server_id = server['id']
    assert cinder.volumes[old['id']]['status'] == 'in-use'
    assert cinder.volumes[new['id']]['status'] == 'available'
    assert [a['volume_id'] for a in cinder.attachments_of(server_id)] == [old['id']]
    assert [a['volumeId'] for a in _listed(stack, server_id)] == [old['id']]
    assert driver(stack, server).volumes(server_id)['/dev/vdb']['serial'] == old['id']


@pytest.mark.parametrize('version', ['2.1', '2.85'])
def test_swap_moves_the_guest_the_mapping_and_both_attachments(stack, cinder, server,
                                                               version):
    server_id = server['id']
    old = _attached(stack, cinder, server_id, tag='data', delete_on_termination=True)
    (before,) = _listed(stack, server_id)
    new = cinder.add_volume(size=2)
    # Migrated by Cinder before: Nova 34 refuses only a missing or empty status, and no
    # migration is under way, so Cinder is not told of this swap.
    _migrating(cinder, old, 'success')

    resp = _swap(stack, server_id, old['id'], new['id'], version=version)
    assert resp.status_code == 202, resp.text
    assert resp.text == ''
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Success')])
    assert cinder.volumes[old['id']]['status'] == 'available'

    assert cinder.volumes[new['id']]['status'] == 'in-use'
    (held,) = cinder.attachments_of(server_id)
    assert held['volume_id'] == new['id'] and held['status'] == 'attached'
    (after,) = _listed(stack, server_id)
    # The device, tag, delete_on_termination and mapping stay; the volume and its
    # attachment are the new ones.
    assert after == dict(before, volumeId=new['id'], attachment_id=held['id'])
    assert after['tag'] == 'data' and after['delete_on_termination'] is True
    guest = driver(stack, server).volumes(server_id)
    assert list(guest) == ['/dev/vdb']
    assert guest['/dev/vdb']['serial'] == new['id']
    assert guest['/dev/vdb']['data']['name'] == 'volumes/volume-%s' % new['id']
    bdm = _bdm(server_id, new['id'])
    assert bdm.volume_size == 2
    assert bdm.connection is not None and bdm.connection['serial'] == new['id']
    with pytest.raises(exception.VolumeBDMNotFound):
        _bdm(server_id, old['id'])
    shown = stack.request('GET', '/servers/%s' % server_id).json()['server']
    assert shown['status'] == 'ACTIVE'
    assert shown['os-extended-volumes:volumes_attached'] == [{'id': new['id']}]

    # The server's delete deletes the new volume (delete_on_termination), not the old.
    delete(stack, server_id)
    assert new['id'] not in cinder.volumes
    assert cinder.volumes[old['id']]['status'] == 'available'


def test_an_update_and_a_swap_in_one_put_from_2_85(stack, cinder, server):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id), 'success')
    new = cinder.add_volume()
    resp = _swap(stack, server_id, old['id'], new['id'], version='2.85',
                 delete_on_termination=True)
    assert resp.status_code == 202, resp.text
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Success')])
    assert cinder.volumes[new['id']]['status'] == 'in-use'
    assert cinder.volumes[old['id']]['status'] == 'available'
    (listed,) = _listed(stack, server_id)
    assert listed['volumeId'] == new['id'] and listed['delete_on_termination'] is True


def test_swap_refusals_leave_both_volumes_as_they_were(stack, cinder, flavor, server):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id, size=2))
    new = cinder.add_volume(size=2)
    missing = str(uuid.uuid4())

    # Only administrators (and services) swap; the owner may still update from 2.85.
    resp = _swap(stack, server_id, old['id'], new['id'], token='alice:admin')
    assert fault(resp, 403)
    # The old volume is the path's: 404; the new one is the body's: 400.
    assert missing in fault(_swap(stack, server_id, missing, new['id']), 404)
    assert missing in fault(_swap(stack, server_id, old['id'], missing), 400)
    # A volume the server does not have.
    stray = cinder.add_volume(size=2, migration_status='migrating')
    assert 'different instance' in fault(_swap(stack, server_id, stray['id'], new['id']),
                                         400)
    # The same volume, an attached one, a smaller one.
    assert 'must be detached' in fault(_swap(stack, server_id, old['id'], old['id']), 400)
    other = boot_active(stack, flavor, name='other-vm')
    try:
        elsewhere = _attached(stack, cinder, other['id'])
        message = fault(_swap(stack, server_id, old['id'], elsewhere['id']), 400)
        assert 'must be detached' in message
    finally:
        delete(stack, other['id'])
    small = cinder.add_volume(size=1)
    assert 'same size or larger' in fault(_swap(stack, server_id, old['id'], small['id']),
                                          400)
    # Cinder refuses to reserve a volume that is not available: the old one is in use
    # again.
    broken = cinder.add_volume(size=2, status='error')
    assert broken['id'] in fault(_swap(stack, server_id, old['id'], broken['id']), 400)
    assert cinder.volumes[broken['id']]['status'] == 'error'
    _unchanged(stack, cinder, server, old, new)

    # A multiattach volume with another writer.
    cinder.volumes[old['id']]['multiattach'] = True
    extra = str(uuid.uuid4())
    cinder.attachments[extra] = {'id': extra, 'status': 'attached', 'instance': missing,
                                 'volume_id': old['id'], 'attached_at': '',
                                 'detached_at': '', 'attach_mode': 'rw',
                                 'connection_info': {}}
    cinder.volumes[old['id']]['attachments'].append(
        {'id': extra, 'attachment_id': extra, 'server_id': missing, 'volume_id': old['id']})
    try:
        message = fault(_swap(stack, server_id, old['id'], new['id']), 400)
        assert 'multi-attach' in message
        assert cinder.volumes[old['id']]['status'] == 'in-use'
    finally:
        del cinder.attachments[extra]
        cinder.volumes[old['id']]['attachments'] = [
            a for a in cinder.volumes[old['id']]['attachments'] if a['id'] != extra]
        cinder.volumes[old['id']]['multiattach'] = False

    # A stopped server: 409 (Nova swaps the disk of a guest that runs).
    resp = stack.request('POST', '/servers/%s/action' % server_id, json={'os-stop': None})
    assert resp.status_code == 202, resp.text
    stack.wait_for_status(server_id, ('SHUTOFF',))
    assert 'stopped' in fault(_swap(stack, server_id, old['id'], new['id']), 409)
    _unchanged(stack, cinder, server, old, new)
    assert _swap_events(stack, server_id) == []


def test_a_driver_failing_the_swap_keeps_the_old_volume(stack, cinder, server,
                                                        monkeypatch):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id), 'success')
    new = cinder.add_volume()
    drv = driver(stack, server)

    def refuse(*args, **kwargs):
        raise exception.VolumeAttachFailed(volume_id=new['id'],
                                           reason='fake driver told to fail its swap')
    monkeypatch.setattr(drv, 'swap_volume', refuse)
    resp = _swap(stack, server_id, old['id'], new['id'])
    assert resp.status_code == 202, resp.text
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Error')])
    wait(lambda: not [a for a in cinder.attachments_of(server_id)
                      if a['volume_id'] == new['id']])
    wait(lambda: cinder.volumes[old['id']]['status'] == 'in-use')
    _unchanged(stack, cinder, server, old, new)
    ctxt = nl_context.get_admin_context()
    wait(lambda: objects.InstanceFault.get_latest_for_instance(ctxt, server_id))
    latest = objects.InstanceFault.get_latest_for_instance(ctxt, server_id)
    assert latest is not None and 'fail its swap' in latest.message
    shown = stack.request('GET', '/servers/%s' % server_id).json()['server']
    assert shown['status'] == 'ACTIVE' and shown['OS-EXT-STS:task_state'] is None

    # The driver swaps now: so does the server.
    monkeypatch.undo()
    assert _swap(stack, server_id, old['id'], new['id']).status_code == 202
    wait(lambda: ('compute_swap_volume', 'Success') in _swap_events(stack, server_id))
    assert cinder.volumes[old['id']]['status'] == 'available'
    assert [a['volumeId'] for a in _listed(stack, server_id)] == [new['id']]


def test_a_failed_completion_switches_the_guest_back(stack, cinder, server, monkeypatch):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id), 'success')
    new = cinder.add_volume()
    manager = stack.computes[server['OS-EXT-SRV-ATTR:host']].manager
    swaps = []
    real_swap = manager.driver.swap_volume

    def recording_swap(context, old_info, new_info, instance, mountpoint, resize_to):
        swaps.append((old_info['serial'], new_info['serial']))
        real_swap(context, old_info, new_info, instance, mountpoint, resize_to)

    def refuse(context, attachment_id):
        raise exception.VolumeError(message='Cinder refused to complete it', status=500)
    monkeypatch.setattr(manager.driver, 'swap_volume', recording_swap)
    monkeypatch.setattr(manager.volume_api, 'attachment_complete', refuse)
    resp = _swap(stack, server_id, old['id'], new['id'])
    assert resp.status_code == 202, resp.text
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Error')])
    wait(lambda: cinder.volumes[old['id']]['status'] == 'in-use')
    assert swaps == [(old['id'], new['id']), (new['id'], old['id'])]
    _unchanged(stack, cinder, server, old, new)


@pytest.mark.parametrize('status', ['migrating', 'retyping'])
def test_a_swap_cinder_asked_for_ends_with_its_completion(stack, cinder, server, status):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id), status)
    new = cinder.add_volume()
    resp = _swap(stack, server_id, old['id'], new['id'], version='2.85')
    assert resp.status_code == 202, resp.text
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Success')])
    completions = [s.body['os-migrate_volume_completion'] for s in cinder.requests('POST')
                   if s.body and 'os-migrate_volume_completion' in s.body
                   and s.path.endswith(old['id'] + '/action')]
    assert completions == [{'new_volume': new['id'], 'error': False}]
    assert cinder.volumes[old['id']]['migration_status'] == 'success'
    # Cinder said the server keeps the old volume's id (its migration moves the id to
    # the new volume's data); the attachment is the new one.
    (held,) = cinder.attachments_of(server_id)
    assert held['volume_id'] == new['id']
    (listed,) = _listed(stack, server_id)
    assert listed['volumeId'] == old['id'] and listed['attachment_id'] == held['id']
    bdm = _bdm(server_id, old['id'])
    assert bdm.connection is not None and bdm.connection['serial'] == old['id']
    assert bdm.connection['data']['volume_id'] == old['id']
    # The double does not move ids as Cinder does: leave nothing for the server's delete.
    cinder.volumes[old['id']].pop('migration_status')


def test_a_completion_cinder_refuses_still_moves_the_mapping(stack, cinder, server,
                                                            monkeypatch):
    server_id = server['id']
    old = _migrating(cinder, _attached(stack, cinder, server_id))
    new = cinder.add_volume()
    manager = stack.computes[server['OS-EXT-SRV-ATTR:host']].manager

    def refuse(context, old_volume_id, new_volume_id, error=False):
        raise exception.VolumeError(message='Cinder refused the completion', status=500)
    monkeypatch.setattr(manager.volume_api, 'migrate_volume_completion', refuse)
    resp = _swap(stack, server_id, old['id'], new['id'])
    assert resp.status_code == 202, resp.text
    wait(lambda: _swap_events(stack, server_id) == [('compute_swap_volume', 'Error')])
    # The guest is on the new volume: so is the server's mapping, with its attachment.
    (held,) = cinder.attachments_of(server_id)
    assert held['volume_id'] == new['id']
    (listed,) = _listed(stack, server_id)
    assert listed['volumeId'] == new['id'] and listed['attachment_id'] == held['id']
    assert driver(stack, server).volumes(server_id)['/dev/vdb']['serial'] == new['id']
    assert cinder.volumes[old['id']]['status'] == 'available'
    cinder.volumes[old['id']].pop('migration_status')


@pytest.mark.parametrize('version', ['2.1', '2.85'])
def test_a_volume_cinder_does_not_migrate_is_not_swapped(stack, cinder, server, version):
    server_id = server['id']
    old = _attached(stack, cinder, server_id)
    new = cinder.add_volume()
    missing = str(uuid.uuid4())
    seen = len(cinder.requests('POST'))
    expected = ('volume %s is not migrating; this API should only be called by Cinder'
                % old['id'])
    # No migration status (as Cinder shows a volume it never migrated), or an empty one.
    assert expected in fault(_swap(stack, server_id, old['id'], new['id'],
                                   version=version), 409)
    cinder.volumes[old['id']]['migration_status'] = ''
    assert expected in fault(_swap(stack, server_id, old['id'], new['id'],
                                   version=version), 409)
    # The old volume is looked at first: a missing new volume is not the answer yet.
    assert expected in fault(_swap(stack, server_id, old['id'], missing,
                                   version=version), 409)
    # ...but a missing old volume is (404).
    assert missing in fault(_swap(stack, server_id, missing, new['id'], version=version),
                            404)
    # Only administrators and services get that far.
    assert fault(_swap(stack, server_id, old['id'], new['id'], version=version,
                       token='alice:admin'), 403)
    _unchanged(stack, cinder, server, old, new)
    assert _swap_events(stack, server_id) == []
    # Cinder was told nothing: the old volume never went 'detaching'.
    assert not [s for s in cinder.requests('POST')[seen:]
                if s.body and 'os-begin_detaching' in s.body]
