"""The domain XML: what it says, and that libvirt accepts it."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import libvirt

from novalite.virt.libvirt import config
from tests.unit.virt.conftest import image_meta, make_instance

NS = {'nl': config.NAMESPACE}


def _xml(instance, **kwargs):
    disks = [config.GuestDisk('/i/disk', 'qcow2', 'vda')]
    return config.guest_config(instance, 'test', disks, '/i/console.log', **kwargs).to_xml()


def test_domain_is_sized_and_named_after_instance_and_flavor():
    instance = make_instance(instance_id=26, vcpus=2, memory_mb=256, image_ref='img-1')
    domain = ET.fromstring(_xml(instance))
    assert domain.get('type') == 'test'
    assert domain.findtext('name') == 'instance-0000001a'
    assert domain.findtext('uuid') == instance.uuid
    assert domain.find('memory').get('unit') == 'KiB'
    assert domain.findtext('memory') == str(256 * 1024)
    assert domain.findtext('vcpu') == '2'
    assert domain.find('features/acpi') is not None
    assert domain.find('features/apic') is not None
    assert domain.find('os/boot').get('dev') == 'hd'
    disk = domain.find('devices/disk')
    assert disk.find('driver').get('type') == 'qcow2'
    assert disk.find('source').get('file') == '/i/disk'
    assert disk.find('target').attrib == {'dev': 'vda', 'bus': 'virtio'}
    assert domain.find('devices/serial').get('type') == 'file'
    assert domain.find('devices/serial/source').get('path') == '/i/console.log'
    assert domain.find('devices/interface') is None


def test_metadata_names_instance_flavor_owner_and_image():
    instance = make_instance(memory_mb=512, image_ref='img-1')
    meta = ET.fromstring(_xml(instance)).find('metadata/nl:instance', NS)
    assert meta.findtext('nl:name', namespaces=NS) == 'vm-1'
    flavor = meta.find('nl:flavor', NS)
    assert flavor.get('name') == 'm1.test'
    assert flavor.findtext('nl:memory', namespaces=NS) == '512'
    assert meta.find('nl:owner/nl:project', NS).get('uuid') == 'p1'
    assert meta.find('nl:owner/nl:user', NS).get('uuid') == 'u1'
    assert meta.find('nl:root', NS).attrib == {'type': 'image', 'uuid': 'img-1'}


def test_kernel_boot_uses_the_image_command_line():
    instance = make_instance()
    meta = image_meta({'id': '3b1ea0b8-5c2c-4e1e-8d1e-7e0f1c2d3a4b',
                       'os_command_line': 'console=ttyS0 quiet'})
    os_el = ET.fromstring(_xml(instance, image_meta=meta, kernel='/i/kernel',
                               initrd='/i/ramdisk')).find('os')
    assert os_el.findtext('kernel') == '/i/kernel'
    assert os_el.findtext('initrd') == '/i/ramdisk'
    assert os_el.findtext('cmdline') == 'console=ttyS0 quiet'
    assert os_el.find('boot') is None


def test_libvirt_accepts_the_domain_and_keeps_the_metadata():
    instance = make_instance(instance_id=7, image_ref='img-7')
    conn = libvirt.open('test:///default')
    try:
        domain = conn.defineXML(_xml(instance))
        try:
            assert domain.UUIDString() == instance.uuid
            assert config.metadata_of(domain.XMLDesc(0)) == {
                'name': 'vm-7', 'flavor': 'm1.test', 'project_id': 'p1', 'user_id': 'u1'}
        finally:
            domain.undefine()
    finally:
        conn.close()


def test_metadata_of_a_foreign_domain_is_empty():
    assert config.metadata_of("<domain type='test'><name>x</name></domain>") == {}
