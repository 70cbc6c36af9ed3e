"""A create whose block device mappings make no sense, or whose volumes Cinder refuses,
answers 400 with Nova's message, writes no server and leaves no attachment."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from novalite.conf import CONF
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models
from tests.functional import volume_stack
from tests.functional.volume_stack import boot, fault

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


def _rows():
    with engine.api_reader() as session:
        api = tuple(session.scalar(select(func.count()).select_from(model))
                    for model in (api_models.BuildRequest, api_models.InstanceMapping,
                                  api_models.RequestSpec))
    return api


@pytest.fixture
def refused(stack, cinder):
    """Asserts, after the test, that nothing was written and Cinder holds no new
    attachment and no volume reserved."""
    rows = _rows()
    attachments = dict(cinder.attachments)
    yield
    assert _rows() == rows
    assert cinder.attachments == attachments
    assert not [v for v in cinder.volumes.values()
                if v['status'] in ('reserved', 'attaching')]
    with engine.cell_reader(None) as session:
        assert session.scalar(select(func.count()).select_from(
            main_models.BlockDeviceMapping)) == 0


def _volume_bdm(volume_id, boot_index=0):
    return {'source_type': 'volume', 'destination_type': 'volume', 'uuid': volume_id,
            'boot_index': boot_index}


def test_missing_uuid(stack, flavor, refused):
    resp = boot(stack, flavor, [{'source_type': 'volume', 'destination_type': 'volume',
                                 'boot_index': 0}], image=False)
    assert fault(resp, 400) == 'Block Device Mapping is Invalid: Missing device UUID.'


def test_image_to_local_that_is_not_the_boot_disk(stack, flavor, refused):
    resp = boot(stack, flavor, [{'source_type': 'image', 'destination_type': 'local',
                                 'uuid': stack.image['id'], 'boot_index': 1}])
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: Mapping image to local '
                                'is not supported.')


def test_a_boot_sequence_with_a_gap(stack, cinder, flavor, refused):
    volume = cinder.add_volume()
    resp = boot(stack, flavor, [_volume_bdm(volume['id'], boot_index=1)], image=False)
    assert fault(resp, 400) == (
        'Block Device Mapping is Invalid: Boot sequence for the instance and '
        'image/block device mapping combination is not valid.')


def test_blank_volume_without_size(stack, flavor, refused):
    resp = boot(stack, flavor, [{'source_type': 'blank', 'destination_type': 'volume'}])
    assert fault(resp, 400) == ("Blank volumes (source: 'blank', dest: 'volume') need to "
                                "have non-zero size")


def test_image_to_volume_without_size(stack, flavor, refused):
    resp = boot(stack, flavor, [{'source_type': 'image', 'destination_type': 'volume',
                                 'uuid': stack.image['id'], 'boot_index': 0}], image=False)
    assert fault(resp, 400) == ("Images with destination_type 'volume' need to have a "
                                "non-zero size specified")


def test_volume_not_found(stack, flavor, refused):
    missing = '9d1f4a52-7c1e-4b2c-9a51-2d8f6c3e0b11'
    resp = boot(stack, flavor, [_volume_bdm(missing)], image=False)
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: failed to get volume %s.'
                                % missing)


def test_volume_not_available(stack, cinder, flavor, refused):
    volume = cinder.add_volume(status='in-use')
    resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False)
    message = fault(resp, 400)
    assert message.startswith('Invalid volume: '), message
    assert volume['id'] in message


def test_volume_type_before_2_67(stack, flavor, refused):
    bdm = {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
           'volume_type': 'ceph'}
    resp = boot(stack, flavor, [bdm], version='2.66')
    assert 'volume_type' in fault(resp, 400)


def test_tag_before_2_42(stack, flavor, refused):
    bdm = {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
           'tag': 'data'}
    resp = boot(stack, flavor, [bdm], version='2.41')
    assert 'tag' in fault(resp, 400)


def test_max_count_with_a_source_volume(stack, cinder, flavor, refused):
    volume = cinder.add_volume()
    resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False, max_count=2)
    assert fault(resp, 400) == 'Cannot attach one or more volumes to multiple instances'


def test_no_cinder(stack, cinder, flavor, refused):
    volume = cinder.add_volume()
    CONF.set_override('endpoint_template', None, group='cinder')
    try:
        resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False)
    finally:
        CONF.set_override('endpoint_template', cinder.url + '/v3', group='cinder')
    message = fault(resp, 400)
    assert message.startswith('Volumes need the Block Storage service (Cinder)'), message
    assert cinder.requests() == [] or all(volume['id'] not in s.path
                                          for s in cinder.requests())


def test_a_refused_second_volume_lets_the_first_go(stack, cinder, flavor, refused):
    first = cinder.add_volume()
    second = cinder.add_volume(status='in-use')
    resp = boot(stack, flavor, [_volume_bdm(first['id']), _volume_bdm(second['id'], 1)],
                image=False)
    assert second['id'] in fault(resp, 400)
    assert cinder.volumes[first['id']]['status'] == 'available'


def test_a_root_volume_that_is_not_bootable(stack, cinder, flavor, refused):
    volume = cinder.add_volume(bootable='false')
    resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False)
    assert fault(resp, 400) == 'Block Device %s is not bootable.' % volume['id']


def test_snapshot_not_found(stack, flavor, refused):
    missing = '0c3c6e4e-53a4-4f3a-9f0e-8b7d6c5b4a39'
    resp = boot(stack, flavor, [{'source_type': 'snapshot', 'destination_type': 'volume',
                                 'uuid': missing, 'boot_index': 0}], image=False)
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: failed to get snapshot '
                                '%s.' % missing)


def test_image_not_found(stack, flavor, refused):
    missing = '3f0b1c9e-2d4a-4c8e-9b6f-7a5d4c3b2a10'
    resp = boot(stack, flavor, [{'source_type': 'image', 'destination_type': 'volume',
                                 'uuid': missing, 'boot_index': 0, 'volume_size': 1}],
                image=False)
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: failed to get image %s.'
                                % missing)


def test_a_volume_smaller_than_the_images_min_disk(stack, flavor, refused):
    image = stack.glance.add_image('needs-5g', min_disk=5)
    resp = boot(stack, flavor, [{'source_type': 'image', 'destination_type': 'volume',
                                 'uuid': image['id'], 'boot_index': 0, 'volume_size': 1}],
                image=False)
    assert fault(resp, 400) == (
        'Volume is smaller than the minimum size specified in image metadata. Volume size '
        'is 1073741824 bytes, minimum size is 5368709120 bytes.')


def test_a_root_volume_whose_image_needs_more_memory_than_the_flavor(stack, cinder, flavor,
                                                                     refused):
    volume = cinder.add_volume(volume_image_metadata={'image_id': stack.image['id'],
                                                      'min_ram': '4096'})
    resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False)
    assert "Flavor's memory is too small for requested image." == fault(resp, 400)


def test_cross_az_attach_off_refuses_a_volume_of_another_zone(stack, cinder, flavor,
                                                              refused):
    volume = cinder.add_volume(availability_zone='az-far')
    CONF.set_override('cross_az_attach', False, group='cinder')
    try:
        resp = boot(stack, flavor, [_volume_bdm(volume['id'])], image=False,
                    availability_zone='nova')
    finally:
        CONF.clear_override('cross_az_attach', group='cinder')
    message = fault(resp, 400)
    assert 'az-far' in message and 'same availability zone' in message, message


def test_one_volume_mapped_twice(stack, cinder, flavor, refused):
    volume = cinder.add_volume()
    resp = boot(stack, flavor, [_volume_bdm(volume['id'], None),
                                _volume_bdm(volume['id'], None)])
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: Volume %s is mapped '
                                'more than once.' % volume['id'])


def test_a_data_volume_at_the_images_device(stack, cinder, flavor, refused):
    volume = cinder.add_volume()
    resp = boot(stack, flavor, [dict(_volume_bdm(volume['id'], None),
                                     device_name='/dev/vda')])
    assert fault(resp, 400) == ('Block Device Mapping is Invalid: Device name /dev/vda is '
                                'used more than once.')
