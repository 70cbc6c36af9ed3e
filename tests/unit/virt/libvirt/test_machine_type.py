"""The machine type a guest gets at spawn, recorded in its instance (libvirt test:///)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from novalite.conf import CONF
from novalite.virt.libvirt import machine_type
from tests.unit.virt.conftest import image_meta, make_instance

DATA = b'\0' * 4096


@pytest.fixture
def drv(make_driver):
    return make_driver('host1')


@pytest.fixture
def hw_machine_type():
    def set_option(value):
        CONF.set_override('hw_machine_type', value, group='libvirt')
    yield set_option
    CONF.clear_override('hw_machine_type', group='libvirt')


def _spawn(drv, ctxt, image, instance=None, instance_id=1):
    instance = instance or make_instance(instance_id, image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    return instance


def _domain_machine(drv, instance):
    xml = drv.host.get_guest(instance.uuid).persistent_xml()
    return ET.fromstring(xml).find('os/type').get('machine')


def test_spawn_records_the_default_of_the_host_arch(drv, ctxt, image_server):
    arch = drv.host.get_info()[0]
    instance = _spawn(drv, ctxt, image_server.add_image(DATA, disk_format='raw'))
    assert instance.system_metadata['image_hw_machine_type'] == 'pc'
    assert 'system_metadata' in instance.obj_what_changed()  # the manager's save writes it
    assert _domain_machine(drv, instance) == 'pc'
    assert machine_type.DEFAULT_TYPES[arch] == 'pc'


def test_the_image_property_wins_over_the_option(drv, ctxt, image_server, hw_machine_type):
    hw_machine_type(['x86_64=q35', 'i686=q35'])
    image = image_server.add_image(DATA, disk_format='raw', hw_machine_type='pc-i440fx-2.11')
    instance = _spawn(drv, ctxt, image)
    assert instance.system_metadata['image_hw_machine_type'] == 'pc-i440fx-2.11'
    assert _domain_machine(drv, instance) == 'pc-i440fx-2.11'


def test_the_option_for_the_guest_arch(drv, ctxt, image_server, hw_machine_type):
    arch = drv.host.get_info()[0]
    hw_machine_type(['aarch64=virt', '%s=q35' % arch, 'broken'])
    instance = _spawn(drv, ctxt, image_server.add_image(DATA, disk_format='raw'))
    assert instance.system_metadata['image_hw_machine_type'] == 'q35'


def test_a_recorded_type_is_kept_when_the_option_changes(drv, ctxt, image_server,
                                                         hw_machine_type):
    image = image_server.add_image(DATA, disk_format='raw')
    instance = _spawn(drv, ctxt, image)
    assert instance.system_metadata['image_hw_machine_type'] == 'pc'
    drv.destroy(ctxt, instance)
    # Spawned again (an evacuation, an unshelve) after the option changed.
    hw_machine_type(['x86_64=q35', 'i686=q35'])
    _spawn(drv, ctxt, image, instance=instance)
    assert _domain_machine(drv, instance) == 'pc'
    drv.reboot(ctxt, instance, reboot_type='HARD')
    assert _domain_machine(drv, instance) == 'pc'


def test_an_unknown_arch_takes_what_libvirt_lists(drv, ctxt, image_server):
    caps = ('<capabilities><guest><arch name="ppc64le"><domain type="test"/>'
            '<machine>pseries-8.2</machine><machine>pseries</machine></arch></guest>'
            '</capabilities>')
    instance = make_instance()
    meta = image_meta({'id': None, 'hw_architecture': 'ppc64le'})
    assert machine_type.for_spawn(instance, meta, 'x86_64', lambda: caps,
                                  'test') == 'pseries-8.2'
    nothing = make_instance()
    meta = image_meta({'id': None, 'hw_architecture': 'sparc'})
    assert machine_type.for_spawn(nothing, meta, 'x86_64', lambda: caps, 'test') is None
    assert 'image_hw_machine_type' not in nothing.system_metadata


@pytest.mark.parametrize('existing, new, ok', [
    ('pc', 'pc', True), ('pc', 'q35', False), ('q35', 'pc-q35-5.2', False),
    ('pc-q35-5.2', 'pc-q35-6.0', True), ('pc-q35-6.0', 'pc-q35-5.2', False),
    ('pc-i440fx-rhel7.6.0', 'pc-i440fx-rhel7.8.0', True),
    ('pc-i440fx-rhel7.8.0', 'pc-i440fx-rhel7.6.0', False),
    ('pc-i440fx-5.2', 'pc-q35-5.2', False),
])
def test_update_rules(existing, new, ok):
    if ok:
        machine_type.check_update(existing, new)
    else:
        with pytest.raises(machine_type.InvalidMachineTypeUpdate):
            machine_type.check_update(existing, new)


def test_supported_types():
    for name in ('pc', 'q35', 'virt', 's390-ccw-virtio', 'pc-q35-8.2', 'virt-9.0'):
        machine_type.check_supported(name)
    with pytest.raises(machine_type.UnsupportedMachineType):
        machine_type.check_supported('foo')


def test_record_from_guests_reads_the_defined_domain(drv, ctxt, image_server):
    image = image_server.add_image(DATA, disk_format='raw', hw_machine_type='pc-i440fx-6.2')
    older = _spawn(drv, ctxt, image)
    # As a guest defined before machine types were recorded.
    older.system_metadata = {}
    recorded = _spawn(drv, ctxt, image_server.add_image(DATA, disk_format='raw'),
                      instance_id=2)
    elsewhere = make_instance(instance_id=7)
    changed = machine_type.record_from_guests(drv, [older, recorded, elsewhere])
    assert changed == [older]
    assert older.system_metadata == {'image_hw_machine_type': 'pc-i440fx-6.2'}
    assert 'image_hw_machine_type' not in elsewhere.system_metadata


def test_record_existing_saves_what_the_guests_say(drv, ctxt, image_server, monkeypatch):
    image = image_server.add_image(DATA, disk_format='raw', hw_machine_type='pc-i440fx-6.2')
    older = _spawn(drv, ctxt, image)
    older.system_metadata = {}
    saved = []
    monkeypatch.setattr(older, 'save', lambda: saved.append(older.uuid), raising=False)
    monkeypatch.setattr(machine_type.objects.InstanceList, 'get_by_host',
                        lambda ctxt, host, expected_attrs=None: [older])
    machine_type.record_existing(drv, 'host1')
    assert saved == [older.uuid]
    assert older.system_metadata == {'image_hw_machine_type': 'pc-i440fx-6.2'}


def test_record_existing_logs_and_goes_on_when_instances_cannot_be_read(drv, monkeypatch,
                                                                        caplog):
    def refuse(ctxt, host, expected_attrs=None):
        raise RuntimeError('no conductor')
    monkeypatch.setattr(machine_type.objects.InstanceList, 'get_by_host', refuse)
    machine_type.record_existing(drv, 'host1')
    assert 'Could not record the machine types' in caplog.text
