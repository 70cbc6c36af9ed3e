"""The fake driver's volumes: a record per guest, mountpoint -> connection info."""
from __future__ import annotations

import pytest

from novalite import exception, objects
from novalite.conf import CONF
from novalite.virt import fake
from tests.unit.virt.conftest import make_instance

VOL1 = 'a1a1a1a1-0000-4000-8000-000000000001'
VOL2 = 'a1a1a1a1-0000-4000-8000-000000000002'


def info(vol_id: str) -> dict:
    return {'driver_volume_type': 'rbd', 'serial': vol_id,
            'data': {'name': 'volumes/volume-%s' % vol_id, 'volume_id': vol_id}}


def bdi(*mappings: tuple[str, str | None, int | None]) -> dict:
    return {'root_device_name': '/dev/vda', 'ephemerals': [], 'swap': None,
            'block_device_mapping': [
                {'connection_info': info(vol_id), 'mount_device': device,
                 'boot_index': boot_index, 'disk_bus': None, 'device_type': None,
                 'delete_on_termination': False, 'attachment_id': 'att-' + vol_id,
                 'volume_id': vol_id} for vol_id, device, boot_index in mappings]}


@pytest.fixture
def drv():
    objects.register_all()
    driver = fake.FakeDriver()
    driver.init_host('fake-host')
    return driver


def test_spawn_records_the_mapped_volumes_and_destroy_drops_them(drv):
    instance = make_instance(root_gb=20)
    drv.spawn(None, instance, None, [], None, {},
              block_device_info=bdi((VOL1, None, 0), (VOL2, '/dev/vdb', None)))
    assert drv.volumes(instance.uuid) == {'/dev/vda': info(VOL1), '/dev/vdb': info(VOL2)}
    # The root is the volume: the host's disk holds none of it.
    assert drv.get_available_resource('fake-host')['local_gb_used'] == 0
    drv.destroy(None, instance)
    assert drv.volumes(instance.uuid) == {}


def test_attach_detach_and_swap_update_the_record(drv):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {})
    drv.attach_volume(None, info(VOL1), instance, '/dev/vdb')
    drv.attach_volume(None, info(VOL1), instance, '/dev/vdb')     # again: the same
    assert drv.volumes(instance.uuid) == {'/dev/vdb': info(VOL1)}
    with pytest.raises(exception.VolumeAttachFailed, match='already has volume'):
        drv.attach_volume(None, info(VOL2), instance, '/dev/vdb')
    drv.swap_volume(None, info(VOL1), info(VOL2), instance, '/dev/vdb', 0)
    assert drv.volumes(instance.uuid) == {'/dev/vdb': info(VOL2)}
    drv.detach_volume(None, info(VOL2), instance, '/dev/vdb')
    drv.detach_volume(None, info(VOL2), instance, '/dev/vdb')     # gone: no error
    assert drv.volumes(instance.uuid) == {}
    with pytest.raises(exception.VolumeBDMPathNotFound):
        drv.swap_volume(None, info(VOL1), info(VOL2), instance, '/dev/vdc', 0)


def test_attach_to_a_missing_guest_is_instance_not_found(drv):
    with pytest.raises(exception.InstanceNotFound):
        drv.attach_volume(None, info(VOL1), make_instance(), '/dev/vdb')
    drv.detach_volume(None, info(VOL1), make_instance(), '/dev/vdb')


def test_failures_can_be_injected_per_volume(drv):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {})
    drv.fail_attach_volume_ids.add(VOL1)
    with pytest.raises(exception.VolumeAttachFailed, match=VOL1):
        drv.attach_volume(None, info(VOL1), instance, '/dev/vdb')
    assert drv.volumes(instance.uuid) == {}
    drv.attach_volume(None, info(VOL2), instance, '/dev/vdc')
    drv.fail_detach_volume_ids.add(VOL2)
    with pytest.raises(exception.DeviceDetachFailed):
        drv.detach_volume(None, info(VOL2), instance, '/dev/vdc')
    assert drv.volumes(instance.uuid) == {'/dev/vdc': info(VOL2)}


def test_resize_keeps_the_volumes(drv):
    instance = make_instance()
    mapped = bdi((VOL1, None, 0))
    drv.spawn(None, instance, None, [], None, {}, block_device_info=mapped)
    drv.attach_volume(None, info(VOL2), instance, '/dev/vdb')
    disk_info = drv.migrate_disk_and_power_off(None, instance, 'fake-host', instance.flavor)
    drv.finish_migration(None, None, instance, disk_info, [], None, True, {})
    assert set(drv.volumes(instance.uuid)) == {'/dev/vda', '/dev/vdb'}


def test_the_connector_is_a_fixed_one_for_the_host(drv):
    connector = drv.get_volume_connector(make_instance())
    assert connector['host'] == 'fake-host'
    assert connector['ip'] == CONF.my_ip
    assert connector['multipath'] is False
    assert connector['platform'] and connector['os_type']
