"""Boot from volume end to end: the REST API's block device mappings, the host making
and attaching the volumes before spawn, Cinder's side (the double) and Placement's, and
the delete letting the volumes go."""
from __future__ import annotations

from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, driver

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


def _root(source, uuid=None, size=None, delete_on_termination=None):
    bdm = {'source_type': source, 'destination_type': 'volume', 'boot_index': 0}
    if uuid:
        bdm['uuid'] = uuid
    if size is not None:
        bdm['volume_size'] = size
    if delete_on_termination is not None:
        bdm['delete_on_termination'] = delete_on_termination
    return bdm


def _check_volume_backed(stack, cinder, server, volume_ids):
    """ACTIVE, no image, the volumes listed, in-use with one attachment each for the
    server, the guest given them with connection info, and no root disk in Placement."""
    server_id = server['id']
    assert server['image'] == ''
    attached = server['os-extended-volumes:volumes_attached']
    assert sorted(v['id'] for v in attached) == sorted(volume_ids)
    for volume_id in volume_ids:
        volume = cinder.volumes[volume_id]
        assert volume['status'] == 'in-use', volume
        assert [a['server_id'] for a in volume['attachments']] == [server_id]
    attachments = cinder.attachments_of(server_id)
    assert sorted(a['volume_id'] for a in attachments) == sorted(volume_ids)
    assert all(a['status'] == 'attached' for a in attachments)
    guest = driver(stack, server).volumes(server_id)
    assert guest['/dev/vda']['serial'] in volume_ids
    assert sorted(info['serial'] for info in guest.values()) == sorted(volume_ids)
    for info in guest.values():
        assert info['driver_volume_type'] == 'rbd'
        assert info['data']['name'] == 'volumes/volume-%s' % info['serial']
    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    (resources,) = [a['resources'] for a in allocations.values()]
    assert 'DISK_GB' not in resources, resources


def test_boot_from_image_to_volume_deletes_the_volume_on_termination(stack, cinder, flavor):
    server = boot_active(stack, flavor, [dict(_root('image', stack.image['id'], 1),
                                              delete_on_termination=True)], image=False)
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert server['os-extended-volumes:volumes_attached'][0]['delete_on_termination']
    assert cinder.volumes[volume_id]['volume_image_metadata'] == {
        'image_id': stack.image['id']}
    _check_volume_backed(stack, cinder, server, [volume_id])

    delete(stack, server['id'])
    assert volume_id not in cinder.volumes
    assert cinder.attachments_of(server['id']) == []


def test_a_volume_cinder_will_not_delete_stays_and_the_server_goes(stack, cinder, flavor):
    """As Nova: a delete_on_termination volume with a snapshot (a volume-backed
    server's createImage makes one) cannot be deleted; the server is deleted all the
    same and the volume stays, available."""
    server = boot_active(stack, flavor, [dict(_root('image', stack.image['id'], 1),
                                              delete_on_termination=True)], image=False)
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    cinder.add_snapshot(volume_id)

    delete(stack, server['id'])
    assert cinder.volumes[volume_id]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []


def test_boot_from_image_to_volume_keeps_the_volume_without_delete_on_termination(
        stack, cinder, flavor):
    # openstackclient's --boot-from-volume: the imageRef, and the image in the mapping.
    server = boot_active(stack, flavor, [_root('image', stack.image['id'], 1)])
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    _check_volume_backed(stack, cinder, server, [volume_id])

    delete(stack, server['id'])
    assert cinder.volumes[volume_id]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []


def test_boot_from_an_existing_volume(stack, cinder, flavor):
    volume = cinder.add_volume(size=1)
    server = boot_active(stack, flavor, [_root('volume', volume['id'])], image=False)
    _check_volume_backed(stack, cinder, server, [volume['id']])
    attachment = cinder.attachments_of(server['id'])[0]
    assert attachment['connection_info']['attachment_id'] == attachment['id']

    delete(stack, server['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server['id']) == []


def test_boot_from_a_snapshot_makes_a_volume_of_it(stack, cinder, flavor):
    source = cinder.add_volume(size=2)
    snapshot = cinder.add_snapshot(source['id'])
    server = boot_active(stack, flavor, [_root('snapshot', snapshot['id'],
                                               delete_on_termination=True)], image=False)
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert cinder.volumes[volume_id]['snapshot_id'] == snapshot['id']
    assert cinder.volumes[volume_id]['size'] == 2
    _check_volume_backed(stack, cinder, server, [volume_id])

    delete(stack, server['id'])
    assert volume_id not in cinder.volumes


def test_image_boot_with_a_blank_extra_volume(stack, cinder, flavor):
    server = boot_active(stack, flavor, [
        {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
         'delete_on_termination': True}])
    server_id = server['id']
    assert server['image']['id'] == stack.image['id']
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert cinder.volumes[volume_id]['name'] == '%s-blank-vol' % server_id
    assert cinder.volumes[volume_id]['status'] == 'in-use'
    # The image is the guest's vda; the blank volume the next disk.
    assert list(driver(stack, server).volumes(server_id)) == ['/dev/vdb']
    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    (resources,) = [a['resources'] for a in allocations.values()]
    assert resources['DISK_GB'] == 2

    delete(stack, server_id)
    assert volume_id not in cinder.volumes


def test_volume_type_from_2_67_reaches_cinder(stack, cinder, flavor):
    server = boot_active(stack, flavor, [dict(_root('image', stack.image['id'], 1),
                                              volume_type='ceph-ssd',
                                              delete_on_termination=True)],
                         image=False, version='2.67')
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert cinder.volumes[volume_id]['volume_type'] == 'ceph-ssd'
    delete(stack, server['id'])
    assert volume_id not in cinder.volumes


def test_the_servers_list_shows_each_servers_volumes(stack, cinder, flavor):
    volume = cinder.add_volume()
    backed = boot_active(stack, flavor, [_root('volume', volume['id'])], image=False)
    plain = boot_active(stack, flavor)
    try:
        servers = stack.request('GET', '/servers/detail', version='2.1').json()['servers']
        attached = {s['id']: s['os-extended-volumes:volumes_attached'] for s in servers}
        assert attached[backed['id']] == [{'id': volume['id']}]
        assert attached[plain['id']] == []
        images = {s['id']: s['image'] for s in servers}
        assert images[backed['id']] == '' and images[plain['id']]['id'] == stack.image['id']
    finally:
        delete(stack, backed['id'])
        delete(stack, plain['id'])


def test_device_names_given_without_dev_are_kept_with_it(stack, cinder, flavor):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [
        dict(_root('volume', volume['id']), device_name='vda'),
        {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
         'device_name': 'vdc', 'delete_on_termination': True}], image=False)
    server_id = server['id']
    listed = stack.request('GET', '/servers/%s/os-volume_attachments' % server_id,
                           version='2.79').json()['volumeAttachments']
    assert sorted(a['device'] for a in listed) == ['/dev/vda', '/dev/vdc']
    assert sorted(driver(stack, server).volumes(server_id)) == ['/dev/vda', '/dev/vdc']
    delete(stack, server_id)
