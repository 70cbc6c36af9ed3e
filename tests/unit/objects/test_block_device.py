"""BlockDeviceMapping on SQLite: create, save, destroy (soft), the reads by volume and
instance, and the views' read of several instances at once."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects


def _bdm(cctxt, instance_uuid, volume_id=None, **values):
    fields = dict(instance_uuid=instance_uuid, source_type='volume',
                  destination_type='volume', volume_id=volume_id or str(uuid.uuid4()),
                  device_name='/dev/vdb', boot_index=None, delete_on_termination=False,
                  no_device=False)
    bdm = objects.BlockDeviceMapping(cctxt, **dict(fields, **values))
    bdm.create()
    return bdm


@pytest.fixture
def cell(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        yield dbs, cctxt


def test_create_gives_an_id_and_a_uuid_and_reads_back(cell):
    dbs, cctxt = cell
    instance = dbs.add_instance('h1')
    bdm = _bdm(cctxt, instance, tag='data', volume_type='ceph')
    assert bdm.id and uuid.UUID(bdm.uuid)
    found = objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, bdm.volume_id,
                                                                 instance)
    assert (found.id, found.uuid, found.tag, found.volume_type, found.device_name) == (
        bdm.id, bdm.uuid, 'data', 'ceph', '/dev/vdb')
    assert found.connection is None and found.attachment_id is None
    assert objects.BlockDeviceMapping.get_by_uuid(cctxt, bdm.uuid).id == bdm.id


def test_save_writes_the_changes_and_the_connection_as_json(cell):
    dbs, cctxt = cell
    instance = dbs.add_instance('h1')
    bdm = _bdm(cctxt, instance)
    attachment = str(uuid.uuid4())
    bdm.attachment_id = attachment
    bdm.set_connection({'driver_volume_type': 'rbd', 'data': {'name': 'volumes/v'}})
    bdm.delete_on_termination = True
    bdm.save()
    assert not bdm.obj_what_changed()
    found = objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, bdm.volume_id,
                                                                 instance)
    assert found.attachment_id == attachment and found.delete_on_termination
    assert found.connection == {'driver_volume_type': 'rbd', 'data': {'name': 'volumes/v'}}


def test_save_of_a_destroyed_mapping_raises_not_found(cell):
    dbs, cctxt = cell
    bdm = _bdm(cctxt, dbs.add_instance('h1'))
    bdm.destroy()
    bdm.tag = 'late'
    with pytest.raises(exception.VolumeBDMNotFound):
        bdm.save()


def test_destroy_hides_the_mapping_from_every_read(cell):
    dbs, cctxt = cell
    instance = dbs.add_instance('h1')
    kept = _bdm(cctxt, instance)
    gone = _bdm(cctxt, instance, device_name='/dev/vdc')
    gone.destroy()
    with pytest.raises(exception.VolumeBDMNotFound):
        objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, gone.volume_id, instance)
    with pytest.raises(exception.VolumeBDMNotFound):
        objects.BlockDeviceMapping.get_by_uuid(cctxt, gone.uuid)
    listed = objects.BlockDeviceMappingList.get_by_instance_uuid(cctxt, instance)
    assert [b.id for b in listed] == [kept.id]
    by_instance = objects.BlockDeviceMappingList.bdms_by_instance_uuid(cctxt, [instance])
    assert [b.id for b in by_instance[instance]] == [kept.id]


def test_a_volume_attached_again_reads_as_its_newest_mapping(cell):
    dbs, cctxt = cell
    instance = dbs.add_instance('h1')
    volume = str(uuid.uuid4())
    first = _bdm(cctxt, instance, volume)
    first.destroy()
    second = _bdm(cctxt, instance, volume, device_name='/dev/vdc')
    found = objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, volume, instance)
    assert found.id == second.id
    other = dbs.add_instance('h1')
    with pytest.raises(exception.VolumeBDMNotFound):
        objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, volume, other)


def test_bdms_by_instance_uuid_groups_by_instance_in_id_order(cell):
    dbs, cctxt = cell
    one, two, empty = (dbs.add_instance('h1') for _ in range(3))
    a = _bdm(cctxt, one)
    b = _bdm(cctxt, two)
    c = _bdm(cctxt, one, device_name='/dev/vdc')
    found = objects.BlockDeviceMappingList.bdms_by_instance_uuid(cctxt, [one, two, empty])
    assert {k: [bdm.id for bdm in v] for k, v in found.items()} == {
        one: [a.id, c.id], two: [b.id], empty: []}
    assert objects.BlockDeviceMappingList.bdms_by_instance_uuid(cctxt, []) == {}


def test_request_dicts_round_trip_without_connection_info(cell):
    dbs, cctxt = cell
    bdm = _bdm(cctxt, dbs.add_instance('h1'), boot_index=0)
    bdm.set_connection({'data': {}})
    values = bdm.to_request()
    assert 'connection_info' not in values and values['boot_index'] == 0
    again = objects.BlockDeviceMapping.from_request(cctxt, dict(values, ignored=1))
    assert again.volume_id == bdm.volume_id and again.is_root and again.is_volume
    listed = objects.BlockDeviceMappingList.from_requests(cctxt, [values])
    assert listed.root_bdm() is not None and listed.volumes() == list(listed)
