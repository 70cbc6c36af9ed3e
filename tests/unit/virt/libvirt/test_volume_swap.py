"""A volume swapped on the libvirt driver (``volume.swap``).

On libvirt's test driver (no block jobs, no device calls) the definition alone gets the
new volume's disk. The block copy itself (its flags, the wait for the mirror to be
ready, the pivot, the resize, the abort of a copy that fails) is tested on a domain
double that plays the job as libvirt reports it.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import libvirt
import pytest

from novalite import exception
from novalite.virt.libvirt import guest as libvirt_guest
from novalite.virt.libvirt import volume
from tests.unit.virt.conftest import make_instance
from tests.unit.virt.test_libvirt_volume import VOL1, VOL2, assert_rbd_disk, disks_of, rbd_info

ADDRESS = "<address type='pci' domain='0x0000' bus='0x00' slot='0x07' function='0x0'/>"


@pytest.fixture
def drv(make_driver):
    return make_driver('host1')


@pytest.mark.parametrize('running', [True, False])
def test_the_test_driver_swaps_the_definition(drv, ctxt, running):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    if not running:
        drv.power_off(instance)
    drv.attach_volume(ctxt, rbd_info(VOL1), instance, '/dev/vdb')
    drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2), instance, '/dev/vdb', 0)
    disks = disks_of(drv.host.get_guest(instance.uuid).persistent_xml())
    assert_rbd_disk(disks['vdb'], VOL2)
    assert 'vda' in disks


def test_a_swap_of_a_disk_the_guest_lacks_or_to_an_encrypted_volume_is_refused(drv, ctxt):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    with pytest.raises(exception.VolumeBDMPathNotFound):
        drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2), instance, '/dev/vdb', 0)
    drv.attach_volume(ctxt, rbd_info(VOL1), instance, '/dev/vdb')
    with pytest.raises(exception.VolumeAttachFailed, match='encrypted'):
        drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2, encrypted=True), instance,
                        '/dev/vdb', 0)
    assert_rbd_disk(disks_of(drv.host.get_guest(instance.uuid).persistent_xml())['vdb'],
                    VOL1)


class CopyDouble:
    """A running domain with the old volume at vdb, whose block copy gets ready after
    ``polls_to_ready`` reads of the job (or ends, with ``vanishes``)."""

    def __init__(self, uuid: str, polls_to_ready: int = 2, vanishes: bool = False) -> None:
        self.uuid = uuid
        disk = ET.fromstring(volume.config.disk_xml(volume.disk_config(
            rbd_info(VOL1), '/dev/vdb')))
        disk.append(ET.fromstring(ADDRESS))
        self.disk = ET.tostring(disk, encoding='unicode')
        self.persistent = self._domain(self.disk)
        self.live = self.persistent
        self.calls: list[tuple] = []
        self.polls = 0
        self.polls_to_ready = polls_to_ready
        self.vanishes = vanishes
        self.copy_xml: str | None = None

    def _domain(self, disk: str) -> str:
        return ("<domain type='kvm'><name>d</name><uuid>%s</uuid><devices>%s</devices>"
                '</domain>') % (self.uuid, disk)

    def UUIDString(self) -> str:
        return self.uuid

    def isActive(self) -> int:
        return 1

    def XMLDesc(self, flags: int) -> str:
        return self.persistent if flags & libvirt.VIR_DOMAIN_XML_INACTIVE else self.live

    def blockCopy(self, disk: str, xml: str, params: object, flags: int) -> None:
        self.calls.append(('copy', disk, flags))
        self.copy_xml = xml

    def blockJobInfo(self, disk: str, flags: int) -> dict:
        self.calls.append(('info', disk))
        self.polls += 1
        if self.vanishes:
            return {}
        if self.polls >= self.polls_to_ready:
            live = ET.fromstring(self.live)
            found = live.find('devices/disk')
            if found is not None and found.find('mirror') is None:
                ET.SubElement(found, 'mirror', ready='yes')
            self.live = ET.tostring(live, encoding='unicode')
            return {'type': 2, 'cur': 100, 'end': 100}
        return {'type': 2, 'cur': 10 * self.polls, 'end': 100}

    def blockJobAbort(self, disk: str, flags: int) -> None:
        self.calls.append(('abort', disk, flags))
        if flags & libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT:
            assert self.copy_xml is not None
            self.live = self._domain(self.copy_xml)

    def blockInfo(self, disk: str, flags: int) -> list[int]:
        return [1024 ** 3, 1024 ** 3, 1024 ** 3]

    def blockResize(self, disk: str, size: int, flags: int) -> None:
        self.calls.append(('resize', disk, size, flags))


@pytest.fixture
def copy_double(drv, monkeypatch):
    """``make(**kwargs)``: an instance whose domain is a CopyDouble; what the host
    defines lands in the double's persistent XML."""
    monkeypatch.setattr(volume, 'COPY_POLL_INTERVAL', 0)

    def make(**kwargs):
        instance = make_instance()
        domain = CopyDouble(instance.uuid, **kwargs)
        monkeypatch.setattr(drv.host, 'get_guest', lambda uuid: libvirt_guest.Guest(domain))

        class Connection:
            def lookupByUUIDString(self, uuid):
                return domain
        monkeypatch.setattr(drv.host, 'get_connection', lambda: Connection())

        def define(xml):
            domain.persistent = xml
            return libvirt_guest.Guest(domain)
        monkeypatch.setattr(drv.host, 'define', define)
        return instance, domain
    return make


@pytest.mark.parametrize('resize_to', [0, 2])
def test_a_running_guest_is_copied_pivoted_and_redefined(drv, ctxt, copy_double,
                                                          resize_to):
    instance, domain = copy_double(polls_to_ready=3)
    drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2), instance, '/dev/vdb', resize_to)

    flags = libvirt.VIR_DOMAIN_BLOCK_COPY_REUSE_EXT | \
        libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB
    assert domain.calls == [
        ('abort', 'vdb', 0), ('copy', 'vdb', flags), ('info', 'vdb'), ('info', 'vdb'),
        ('info', 'vdb'), ('abort', 'vdb', libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT)]
    assert domain.copy_xml is not None
    copied = ET.fromstring(domain.copy_xml)
    assert_rbd_disk(copied, VOL2)
    # A larger volume is copied to as a slice of the old disk's size (QEMU mirrors
    # onto a target of the source's size only).
    slices = copied.findall('source/slices/slice')
    assert [(s.get('type'), s.get('offset'), s.get('size')) for s in slices] == (
        [('storage', '0', str(1024 ** 3))] if resize_to else [])
    # The guest runs on the new volume, and its definition has it (whole), at the old
    # address.
    source = disks_of(domain.live)['vdb'].find('source')
    assert source is not None and source.get('name') == 'volumes/volume-' + VOL2
    defined = disks_of(domain.persistent)['vdb']
    assert_rbd_disk(defined, VOL2)
    assert defined.find('source/slices') is None
    address = defined.find('address')
    assert address is not None and address.get('slot') == '0x07'


def test_a_copy_that_ends_before_it_is_ready_leaves_the_old_volume(drv, ctxt,
                                                                   copy_double):
    instance, domain = copy_double(vanishes=True)
    before = domain.persistent
    with pytest.raises(exception.VolumeAttachFailed, match='ended before it was ready'):
        drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2), instance, '/dev/vdb', 0)
    assert domain.calls[-1] == ('abort', 'vdb', 0)
    assert not [c for c in domain.calls if c[0] == 'resize']
    assert domain.persistent == before
    assert_rbd_disk(disks_of(domain.live)['vdb'], VOL1)


def test_a_copy_libvirt_refuses_is_a_volume_failure(drv, ctxt, copy_double):
    instance, domain = copy_double()

    def refuse(disk, xml, params, flags):
        raise libvirt.libvirtError('block copy is not supported with this QEMU binary')
    domain.blockCopy = refuse
    with pytest.raises(exception.VolumeAttachFailed, match='block copy to it failed'):
        drv.swap_volume(ctxt, rbd_info(VOL1), rbd_info(VOL2), instance, '/dev/vdb', 0)
    assert_rbd_disk(disks_of(domain.persistent)['vdb'], VOL1)
