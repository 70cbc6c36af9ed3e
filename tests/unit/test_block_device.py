"""Block device mapping v2 as the API receives it: Nova's rules for each entry, the boot
sequence, what a create boots from, and the device names volumes get."""
from __future__ import annotations

import pytest

from novalite import block_device, exception

IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
OTHER_IMAGE = '6b1a6f40-7b5a-4b8b-bd32-3f9a8a9e0c11'
VOLUME = '2a4d2f1e-9b7e-4d6a-8c1b-5e0f3d2c1b0a'
SNAPSHOT = '7c9e6679-7425-40de-944b-e07fc1f90ae7'


def _volume(boot_index=0, **extra):
    return dict({'source_type': 'volume', 'destination_type': 'volume', 'uuid': VOLUME,
                 'boot_index': boot_index}, **extra)


def _details(error):
    return str(error.value)


def test_a_volume_entry_becomes_a_mapping_dict():
    bdm = block_device.from_api(_volume(boot_index='0', delete_on_termination='true',
                                        device_name='/dev/vda'), False)
    assert bdm['volume_id'] == VOLUME and 'uuid' not in bdm
    assert bdm['boot_index'] == 0 and bdm['delete_on_termination'] is True
    assert bdm['volume_size'] is None and bdm['destination_type'] == 'volume'


@pytest.mark.parametrize('source,key', [('image', 'image_id'), ('snapshot', 'snapshot_id')])
def test_the_uuid_names_the_source(source, key):
    bdm = block_device.from_api({'source_type': source, 'destination_type': 'volume',
                                 'uuid': IMAGE, 'boot_index': 0, 'volume_size': '2'}, False)
    assert bdm[key] == IMAGE and bdm['volume_size'] == 2


def test_a_negative_boot_index_is_no_boot_index():
    assert block_device.from_api(_volume(boot_index=-1), False)['boot_index'] is None
    assert block_device.from_api(_volume(boot_index=None), False)['boot_index'] is None


@pytest.mark.parametrize('entry,details', [
    ({'source_type': 'volume', 'destination_type': 'volume', 'boot_index': 0},
     'Missing device UUID.'),
    ({'source_type': 'blank', 'destination_type': 'volume', 'uuid': VOLUME},
     'Invalid device UUID.'),
    ({'source_type': 'floppy', 'uuid': VOLUME}, 'Invalid source_type field.'),
    ({'source_type': 'image', 'destination_type': 'local', 'uuid': IMAGE, 'boot_index': 1},
     'Mapping image to local is not supported.'),
    ({'source_type': 'blank', 'destination_type': 'local', 'volume_size': 1},
     'Ephemeral and swap disks'),
    (_volume(volume_type='ceph'),
     'Specifying volume type to existing volume is not supported.'),
    (_volume(destination_type='local'), 'A volume can only be mapped to destination_type '
                                        'volume.'),
    (_volume(boot_index='first'), 'Boot index is invalid.'),
    (_volume(volume_size='big'), 'Invalid volume_size.'),
    (_volume(device_name='vd b'), 'Device name contains spaces.'),
    (_volume(no_device=True), 'no_device'),
])
def test_entries_nova_refuses(entry, details):
    with pytest.raises(exception.InvalidBDMFormat) as error:
        block_device.from_api(entry, False)
    assert details in _details(error)


def test_an_image_to_local_boot_disk_needs_an_image_to_boot():
    entry = {'source_type': 'image', 'destination_type': 'local', 'uuid': IMAGE,
             'boot_index': 0}
    assert block_device.from_api(entry, True)['image_id'] == IMAGE
    with pytest.raises(exception.InvalidBDMFormat):
        block_device.from_api(entry, False)


def test_volume_type_on_a_local_disk_is_refused():
    with pytest.raises(exception.InvalidBDMFormat, match='destination_type=local'):
        block_device.from_api({'source_type': 'image', 'destination_type': 'local',
                               'uuid': IMAGE, 'boot_index': 0, 'volume_type': 'ceph'}, True)


@pytest.mark.parametrize('indexes', [[0], [0, 1], [1, 0, 2], [0, None]])
def test_boot_sequences_that_are_valid(indexes):
    block_device.check_boot_sequence([{'boot_index': i} for i in indexes])


@pytest.mark.parametrize('indexes', [[], [None], [1], [0, 2], [0, 0]])
def test_boot_sequences_that_are_not(indexes):
    with pytest.raises(exception.InvalidBDMBootSequence):
        block_device.check_boot_sequence([{'boot_index': i} for i in indexes])


def test_parse_image_alone_boots_the_image():
    assert block_device.parse([], IMAGE) == (IMAGE, [])


def test_parse_openstackclients_image_to_local_adds_nothing():
    entry = {'source_type': 'image', 'destination_type': 'local', 'uuid': IMAGE,
             'boot_index': 0, 'delete_on_termination': True}
    assert block_device.parse([entry], IMAGE) == (IMAGE, [])
    assert block_device.parse([entry], None) == (IMAGE, [])


def test_parse_refuses_a_boot_image_other_than_image_ref():
    entry = {'source_type': 'image', 'destination_type': 'local', 'uuid': OTHER_IMAGE,
             'boot_index': 0}
    with pytest.raises(exception.InvalidBDMFormat, match='differ'):
        block_device.parse([entry], IMAGE)


def test_parse_boot_from_volume_with_image_ref_boots_no_image():
    # openstackclient's --boot-from-volume: the image in the mapping and as imageRef.
    image, volumes = block_device.parse([{
        'source_type': 'image', 'destination_type': 'volume', 'uuid': IMAGE,
        'boot_index': 0, 'volume_size': 1}], IMAGE)
    assert image is None
    assert [(v['source_type'], v['image_id'], v['boot_index']) for v in volumes] == [
        ('image', IMAGE, 0)]


def test_parse_an_existing_root_volume_and_a_blank_data_volume():
    image, volumes = block_device.parse([
        _volume(), {'source_type': 'blank', 'destination_type': 'volume',
                    'volume_size': 1, 'boot_index': 1}], None)
    assert image is None and [v['source_type'] for v in volumes] == ['volume', 'blank']


def test_parse_an_image_boot_with_data_volumes_without_boot_indexes():
    image, volumes = block_device.parse([_volume(boot_index=None), {
        'source_type': 'snapshot', 'destination_type': 'volume', 'uuid': SNAPSHOT}], IMAGE)
    assert image == IMAGE and [v['boot_index'] for v in volumes] == [None, None]


def test_parse_a_root_volume_beside_a_local_boot_image_is_refused():
    with pytest.raises(exception.InvalidBDMBootSequence):
        block_device.parse([_volume(), {'source_type': 'image', 'destination_type': 'local',
                                        'uuid': IMAGE, 'boot_index': 0}], IMAGE)


@pytest.mark.parametrize('api_bdms,image', [
    ([_volume(boot_index=1)], None),                   # a gap before it
    ([_volume(boot_index=None)], None),                # nothing to boot
    ([_volume(boot_index=1)], IMAGE),                  # 0 is the image: fine below
])
def test_parse_boot_sequences(api_bdms, image):
    if image:
        assert block_device.parse(api_bdms, image)[0] == image
        return
    with pytest.raises(exception.InvalidBDMBootSequence):
        block_device.parse(api_bdms, image)


@pytest.mark.parametrize('used,expected', [
    ([], '/dev/vda'),
    (['/dev/vda'], '/dev/vdb'),
    (['vda', 'vdb'], '/dev/vdc'),
    (['/dev/vda', '/dev/vdc'], '/dev/vdb'),
    (['/dev/vda', None, '', '/dev/sr0'], '/dev/vdb'),
])
def test_next_device_name(used, expected):
    assert block_device.next_device_name(used) == expected


def test_next_device_name_with_another_prefix_and_when_none_is_left():
    assert block_device.next_device_name(['/dev/sda'], prefix='/dev/sd') == '/dev/sdb'
    every = ['/dev/vd' + chr(c) for c in range(ord('a'), ord('z') + 1)]
    with pytest.raises(exception.InvalidBDMFormat, match='No free device name'):
        block_device.next_device_name(every)


def test_dev_prefixes():
    assert block_device.strip_dev('/dev/vdb') == 'vdb'
    assert block_device.prepend_dev('vdb') == '/dev/vdb'
    assert block_device.prepend_dev('/dev/vdb') == '/dev/vdb'
    assert block_device.strip_dev(None) is None


def test_a_device_name_is_kept_with_dev():
    assert block_device.from_api(_volume(device_name='vdb'), False)['device_name'] == \
        '/dev/vdb'
    assert block_device.from_api(_volume(device_name='/dev/sdc'), False)['device_name'] == \
        '/dev/sdc'


def test_parse_refuses_a_volume_mapped_twice():
    with pytest.raises(exception.InvalidBDMFormat, match='mapped more than once'):
        block_device.parse([_volume(), _volume(boot_index=None)], None)


@pytest.mark.parametrize('api_bdms,image', [
    ([_volume(boot_index=None, device_name='vda')], IMAGE),
    ([_volume(device_name='/dev/vdb'),
      {'source_type': 'blank', 'destination_type': 'volume', 'volume_size': 1,
       'device_name': 'vdb'}], None),
])
def test_parse_refuses_a_device_name_used_twice(api_bdms, image):
    with pytest.raises(exception.InvalidBDMFormat, match='used more than once'):
        block_device.parse(api_bdms, image)


def test_parse_takes_two_volumes_of_one_snapshot():
    snapshot = {'source_type': 'snapshot', 'destination_type': 'volume', 'uuid': SNAPSHOT}
    assert len(block_device.parse([snapshot, dict(snapshot)], IMAGE)[1]) == 2
