"""Volumes on the libvirt driver: Cinder's RBD connection info as a network disk, boot
from volume, attach and detach, the host's connector.

libvirt's test driver (9.0) has no device calls (attachDeviceFlags and detachDeviceFlags
answer VIR_ERR_NO_SUPPORT): on it the driver defines the domain again with the disk
added or removed, which the tests below read back from libvirt. The device calls
themselves, their flags and the wait for a running guest to release a disk, are tested
on a domain double (``DomainDouble``) that keeps its live and persistent XML.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import libvirt
import pytest

from novalite import exception, objects
from novalite.compute import power_state
from novalite.conf import CONF
from novalite.virt.libvirt import config, migration, rescue, volume
from novalite.virt.libvirt import guest as libvirt_guest
from tests.unit.virt.conftest import image_meta, make_instance

VOL1 = '6f0c9a1e-0d4e-4c53-9d2b-1c1f5d7f0a01'
VOL2 = '6f0c9a1e-0d4e-4c53-9d2b-1c1f5d7f0a02'
SECRET = 'b3c1f7a2-5d8e-4f10-9a6b-2c4d6e8f0a1b'


def rbd_info(vol_id: str = VOL1, **data) -> dict:
    """Connection info as Cinder 29's RBD driver gave it (see CINDER.md), with the
    ``serial`` the compute manager adds."""
    info = {'name': 'volumes/volume-%s' % vol_id, 'hosts': ['127.0.0.1'], 'ports': ['6789'],
            'cluster_name': 'ceph', 'auth_enabled': True, 'auth_username': 'cinder',
            'secret_type': 'ceph', 'secret_uuid': SECRET, 'volume_id': vol_id,
            'discard': True, 'qos_specs': None, 'access_mode': 'rw', 'encrypted': False,
            'cacheable': False}
    info.update(data)
    return {'driver_volume_type': 'rbd', 'data': info, 'serial': vol_id}


def mapping(vol_id: str, mount_device: str | None, boot_index: int | None = None) -> dict:
    return {'connection_info': rbd_info(vol_id), 'mount_device': mount_device,
            'boot_index': boot_index, 'disk_bus': None, 'device_type': None,
            'delete_on_termination': False, 'attachment_id': 'att-' + vol_id,
            'volume_id': vol_id}


def bdi(*mappings: dict) -> dict:
    root = '/dev/vda' if any(m['boot_index'] == 0 for m in mappings) else None
    return {'root_device_name': root, 'block_device_mapping': list(mappings),
            'ephemerals': [], 'swap': None}


def disks_of(xml: str) -> dict[str, ET.Element]:
    """target dev -> <disk> of a domain XML."""
    return {d.find('target').get('dev'): d for d in ET.fromstring(xml).iter('disk')}


def assert_rbd_disk(disk: ET.Element, vol_id: str) -> None:
    assert (disk.get('type'), disk.get('device')) == ('network', 'disk')
    source = disk.find('source')
    assert (source.get('protocol'), source.get('name')) == ('rbd', 'volumes/volume-' + vol_id)
    assert [(h.get('name'), h.get('port')) for h in source.findall('host')] == \
        [('127.0.0.1', '6789')]
    auth = disk.find('auth')
    assert auth.get('username') == 'cinder'
    assert (auth.find('secret').get('type'), auth.find('secret').get('uuid')) == \
        ('ceph', SECRET)
    assert disk.findtext('serial') == vol_id
    assert disk.find('alias').get('name') == 'ua-' + vol_id
    assert disk.find('driver').get('type') == 'raw'


@pytest.fixture
def drv(make_driver):
    return make_driver('host1')


# -- connection info -> <disk> -----------------------------------------------------------

def test_rbd_connection_info_makes_the_recipes_network_disk():
    disk = ET.fromstring(config.disk_xml(volume.disk_config(rbd_info(), '/dev/vdb')))
    assert_rbd_disk(disk, VOL1)
    assert (disk.find('target').get('dev'), disk.find('target').get('bus')) == ('vdb', 'virtio')
    assert (disk.find('driver').get('cache'), disk.find('driver').get('discard')) == \
        ('none', 'unmap')
    assert disk.find('readonly') is None


def test_a_keyring_in_the_connection_info_is_never_written():
    xml = config.disk_xml(volume.disk_config(rbd_info(keyring='AQBsecretkey=='), '/dev/vdb'))
    assert 'AQBsecretkey' not in xml


def test_read_only_and_no_discard():
    disk = ET.fromstring(config.disk_xml(volume.disk_config(
        rbd_info(access_mode='ro', discard=False), '/dev/vdc')))
    assert disk.find('readonly') is not None
    assert disk.find('driver').get('discard') is None


@pytest.mark.parametrize('volume_type', ['iscsi', 'nfs', None])
def test_other_volume_types_are_refused_clearly(volume_type):
    info = dict(rbd_info(), driver_volume_type=volume_type)
    with pytest.raises(exception.VolumeAttachFailed,
                       match="volume driver %s is not supported by novalite's libvirt "
                             'driver' % volume_type):
        volume.disk_config(info, '/dev/vdb')


@pytest.fixture
def rbd_conf():
    CONF.set_override('rbd_user', 'nova', group='libvirt')
    CONF.set_override('rbd_secret_uuid', 'c0ffee00-0000-4000-8000-000000000001',
                      group='libvirt')
    yield
    CONF.clear_override('rbd_user', group='libvirt')
    CONF.clear_override('rbd_secret_uuid', group='libvirt')


def _auth(info: dict) -> tuple[str | None, str | None]:
    disk = ET.fromstring(config.disk_xml(volume.disk_config(info, '/dev/vdb')))
    auth = disk.find('auth')
    if auth is None:
        return None, None
    return auth.get('username'), auth.find('secret').get('uuid')


def test_cinders_auth_wins_over_the_hosts(rbd_conf):
    assert _auth(rbd_info()) == ('cinder', SECRET)


def test_the_hosts_auth_fills_in_as_novas_does(rbd_conf):
    host = ('nova', 'c0ffee00-0000-4000-8000-000000000001')
    assert _auth(rbd_info(secret_uuid=None)) == host
    assert _auth(rbd_info(auth_enabled=False)) == host


def test_no_auth_anywhere_means_no_auth_element():
    assert _auth(rbd_info(auth_enabled=False)) == (None, None)


def test_a_cephx_user_without_any_secret_is_refused():
    with pytest.raises(exception.VolumeAttachFailed, match='no libvirt secret'):
        volume.disk_config(rbd_info(secret_uuid=None), '/dev/vdb')


# -- spawn with volumes ------------------------------------------------------------------

def test_boot_from_volume_makes_no_image_disk(drv, ctxt, image_server):
    image = image_server.add_image(b'\0' * 4096, disk_format='raw')
    instance = make_instance(image_ref='', ephemeral_gb=1)
    info = bdi(mapping(VOL1, '/dev/vda', boot_index=0), mapping(VOL2, '/dev/vdb'))
    drv.spawn(ctxt, instance, image_meta(image), [], None, {}, block_device_info=info)

    assert drv.get_info(instance).state == power_state.RUNNING
    assert drv.image_cache.cached_images() == []
    assert not os.path.exists(os.path.join(drv.instance_dir(instance), 'disk'))
    xml = drv.host.get_guest(instance.uuid).xml()
    disks = disks_of(xml)
    # libvirt keeps a domain's disks in target order: the root volume is the first.
    assert list(disks) == ['vda', 'vdb', 'vdc']
    assert_rbd_disk(disks['vda'], VOL1)
    assert_rbd_disk(disks['vdb'], VOL2)
    assert disks['vdc'].get('type') == 'file'   # the ephemeral disk: after the volumes
    assert disks['vdc'].find('source').get('file').endswith('disk.eph0')


def test_spawn_from_an_image_adds_the_volumes_after_the_local_disk(drv, ctxt, image_server):
    image = image_server.add_image(b'\0' * 4096, disk_format='raw')
    instance = make_instance(image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {},
              block_device_info=bdi(mapping(VOL2, '/dev/vdb')))
    disks = disks_of(drv.host.get_guest(instance.uuid).xml())
    assert disks['vda'].get('type') == 'file'
    assert_rbd_disk(disks['vdb'], VOL2)


def test_destroy_leaves_volumes_alone(drv, ctxt):
    instance = make_instance()
    info = bdi(mapping(VOL1, '/dev/vda', boot_index=0))
    drv.spawn(ctxt, instance, None, [], None, {}, block_device_info=info)
    drv.destroy(ctxt, instance, block_device_info=info)
    assert drv.list_instance_uuids() == []


def test_resize_keeps_the_volume_disks(drv, ctxt):
    instance = make_instance(root_gb=10)
    info = bdi(mapping(VOL1, '/dev/vda', boot_index=0), mapping(VOL2, '/dev/vdb'))
    drv.spawn(ctxt, instance, None, [], None, {}, block_device_info=info)
    smaller_root = objects.Flavor(name='m1.small', memory_mb=256, vcpus=2, root_gb=1,
                                  ephemeral_gb=0, swap=0, flavorid='43')
    disk_info = drv.migrate_disk_and_power_off(ctxt, instance, 'host1', smaller_root,
                                               block_device_info=info)
    instance.flavor = smaller_root
    drv.finish_migration(ctxt, None, instance, disk_info, [], None, True, {},
                         block_device_info=info)
    disks = disks_of(drv.host.get_guest(instance.uuid).xml())
    assert_rbd_disk(disks['vda'], VOL1)
    assert_rbd_disk(disks['vdb'], VOL2)
    assert drv.host.get_guest(instance.uuid).resources() == (2, 256)


def test_a_volume_backed_root_does_not_stop_a_smaller_flavor():
    instance = make_instance(root_gb=10)
    smaller = objects.Flavor(name='s', memory_mb=128, vcpus=1, root_gb=1, ephemeral_gb=0,
                             swap=0, flavorid='44')
    with pytest.raises(exception.CannotResizeDisk):
        migration.check_disks_fit(instance, smaller)
    migration.check_disks_fit(instance, smaller, volume_backed=True)


def test_a_volume_backed_instance_is_not_rescued(drv, ctxt):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {},
              block_device_info=bdi(mapping(VOL1, '/dev/vda', boot_index=0)))
    with pytest.raises(exception.InstanceNotRescuable, match='boots from a volume'):
        rescue.root_disk(drv.host.get_guest(instance.uuid).persistent_xml(), instance.uuid)


# -- attach and detach on the test driver (the definition changes) ------------------------

def _persistent_disks(drv, instance) -> dict[str, ET.Element]:
    return disks_of(drv.host.get_guest(instance.uuid).persistent_xml())


@pytest.mark.parametrize('running', [True, False])
def test_attach_and_detach_change_the_domains_definition(drv, ctxt, running):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    if not running:
        drv.power_off(instance)
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert_rbd_disk(_persistent_disks(drv, instance)['vdb'], VOL2)
    if not running:
        drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')  # there already
    drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert 'vdb' not in _persistent_disks(drv, instance)
    assert drv.get_info(instance).state == (power_state.RUNNING if running
                                            else power_state.SHUTDOWN)


def test_a_mountpoint_in_use_is_refused(drv, ctxt):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    drv.power_off(instance)
    drv.attach_volume(ctxt, rbd_info(VOL1), instance, '/dev/vdb')
    with pytest.raises(exception.VolumeAttachFailed, match='already has a disk at /dev/vdb'):
        drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    with pytest.raises(exception.VolumeAttachFailed, match='already has a disk at /dev/vda'):
        drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vda')


def test_detach_of_a_disk_or_guest_that_is_gone_is_done(drv, ctxt):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    drv.destroy(ctxt, instance)
    drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')


def test_encrypted_volumes_are_refused(drv, ctxt):
    instance = make_instance()
    drv.spawn(ctxt, instance, None, [], None, {})
    with pytest.raises(exception.VolumeAttachFailed, match='encrypted'):
        drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb',
                          encryption={'provider': 'luks'})


# -- the device calls, on a domain double -------------------------------------------------

class DomainDouble:
    """A running domain's live and persistent XML, changed by the device calls as
    libvirt changes them; ``keep_live`` makes the guest hold on to its disks, and
    ``on_live_detach`` runs after each live detach request (to send an event)."""

    def __init__(self, uuid: str, disks: str = '') -> None:
        self.uuid = uuid
        base = ("<domain type='test'><name>d</name><uuid>%s</uuid><devices>%s</devices>"
                '</domain>') % (uuid, disks)
        self.live = base
        self.persistent = base
        self.calls: list[tuple[str, int]] = []
        self.keep_live = False
        self.error: libvirt.libvirtError | None = None
        self.on_live_detach = None

    def UUIDString(self) -> str:
        return self.uuid

    def isActive(self) -> int:
        return 1

    def XMLDesc(self, flags: int) -> str:
        return self.persistent if flags & libvirt.VIR_DOMAIN_XML_INACTIVE else self.live

    @staticmethod
    def _edit(xml: str, disk: str, add: bool) -> str:
        domain = ET.fromstring(xml)
        devices = domain.find('devices')
        element = ET.fromstring(disk)
        dev = element.find('target').get('dev')
        if add:
            devices.append(element)
        else:
            for found in devices.findall('disk'):
                if found.find('target').get('dev') == dev:
                    devices.remove(found)
        return ET.tostring(domain, encoding='unicode')

    def attachDeviceFlags(self, xml: str, flags: int) -> None:
        self.calls.append(('attach', flags))
        if self.error is not None:
            raise self.error
        if flags & libvirt.VIR_DOMAIN_AFFECT_CONFIG:
            self.persistent = self._edit(self.persistent, xml, True)
        if flags & libvirt.VIR_DOMAIN_AFFECT_LIVE:
            self.live = self._edit(self.live, xml, True)

    def detachDeviceFlags(self, xml: str, flags: int) -> None:
        self.calls.append(('detach', flags))
        if flags & libvirt.VIR_DOMAIN_AFFECT_CONFIG:
            self.persistent = self._edit(self.persistent, xml, False)
        if flags & libvirt.VIR_DOMAIN_AFFECT_LIVE:
            if not self.keep_live:
                self.live = self._edit(self.live, xml, False)
            if self.on_live_detach is not None:
                self.on_live_detach()


LIVE_AND_CONFIG = libvirt.VIR_DOMAIN_AFFECT_CONFIG | libvirt.VIR_DOMAIN_AFFECT_LIVE


@pytest.fixture
def double(drv, monkeypatch):
    instance = make_instance()
    domain = DomainDouble(instance.uuid)
    monkeypatch.setattr(drv.host, 'get_guest', lambda uuid: libvirt_guest.Guest(domain))
    return instance, domain


def test_attach_to_a_running_guest_is_live_and_persistent(drv, ctxt, double):
    instance, domain = double
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert domain.calls == [('attach', LIVE_AND_CONFIG)]
    assert_rbd_disk(disks_of(domain.live)['vdb'], VOL2)
    assert_rbd_disk(disks_of(domain.persistent)['vdb'], VOL2)
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')   # there: nothing to do
    assert len(domain.calls) == 1


def test_a_refused_attach_is_volume_attach_failed(drv, ctxt, double):
    instance, domain = double
    domain.error = libvirt.libvirtError('unable to execute QEMU command blockdev-add')
    with pytest.raises(exception.VolumeAttachFailed, match=VOL2):
        drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')


def test_detach_from_a_running_guest_persistent_then_live(drv, ctxt, double):
    instance, domain = double
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert domain.calls[1:] == [('detach', libvirt.VIR_DOMAIN_AFFECT_CONFIG),
                                ('detach', libvirt.VIR_DOMAIN_AFFECT_LIVE)]
    assert 'vdb' not in disks_of(domain.live) and 'vdb' not in disks_of(domain.persistent)


@pytest.fixture
def quick_detach():
    CONF.set_override('device_detach_attempts', 3, group='libvirt')
    CONF.set_override('device_detach_timeout', 0, group='libvirt')
    yield
    CONF.clear_override('device_detach_attempts', group='libvirt')
    CONF.clear_override('device_detach_timeout', group='libvirt')


def test_a_guest_that_keeps_the_disk_fails_the_detach_after_the_attempts(
        drv, ctxt, double, quick_detach):
    instance, domain = double
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    domain.keep_live = True
    with pytest.raises(exception.DeviceDetachFailed, match='vdb'):
        drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert domain.calls.count(('detach', libvirt.VIR_DOMAIN_AFFECT_LIVE)) == 3


def test_a_device_removal_failed_event_fails_the_detach_at_once(drv, ctxt, double):
    instance, domain = double
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    domain.keep_live = True
    # libvirt's event thread, as the guest refuses: the waiter registered before the
    # request hears it.
    domain.on_live_detach = lambda: drv.host._on_device_removal(
        None, domain, volume.alias(VOL2), True)
    with pytest.raises(exception.DeviceDetachFailed, match='device-removal-failed'):
        drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert domain.calls.count(('detach', libvirt.VIR_DOMAIN_AFFECT_LIVE)) == 1


def test_a_device_removed_event_ends_the_wait(drv, ctxt, double):
    instance, domain = double
    drv.attach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    domain.keep_live = True

    def guest_lets_go() -> None:
        domain.live = DomainDouble._edit(domain.live, config.disk_xml(
            volume.disk_config(rbd_info(VOL2), '/dev/vdb')), False)
        drv.host._on_device_removal(None, domain, volume.alias(VOL2), False)
    domain.on_live_detach = guest_lets_go
    drv.detach_volume(ctxt, rbd_info(VOL2), instance, '/dev/vdb')
    assert 'vdb' not in disks_of(domain.live)


# -- the host's connector ------------------------------------------------------------------

def test_the_connector_comes_from_os_brick_once_per_process(drv):
    instance = make_instance()
    first = drv.get_volume_connector(instance)
    assert first['host'] == 'host1'
    assert first['ip'] == CONF.my_ip
    assert first['multipath'] is False
    assert first['platform'] and first['os_type'] == 'linux'
    first['mountpoint'] = '/dev/vdb'        # the caller's copy
    again = drv.get_volume_connector(instance)
    assert 'mountpoint' not in again
    assert again == {k: v for k, v in first.items() if k != 'mountpoint'}
