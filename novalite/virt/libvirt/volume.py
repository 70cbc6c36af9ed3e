"""Volumes of libvirt guests: Cinder's connection info as a disk of the domain.

Cinder's ``connection_info`` (``driver_volume_type`` and ``data``) says how to reach a
volume; this module turns it into the ``<disk>`` of the domain, as Nova's libvirt
volume drivers do (``nova/virt/libvirt/volume/net.py`` for RBD):

- ``rbd``: a network disk that QEMU opens with librbd, ``<source protocol='rbd'
  name='pool/volume-<id>'>`` with one ``<host>`` per monitor, and with cephx
  ``<auth username=...><secret type='ceph' uuid=.../></auth>``. The key itself lives in
  a libvirt secret that the deployer defines on every compute host (as for Nova and
  devstack); a ``keyring`` in the connection info is not used (Nova's libvirt driver
  does not either: it is what os-brick needs to map the image on the host, which a
  network disk never does) and never written anywhere. What Cinder says about auth wins;
  ``[libvirt] rbd_user`` and ``rbd_secret_uuid`` fill in when Cinder sends auth without
  a secret, or no auth at all (Nova's fallbacks, the second one deprecated there).
- any other type (iSCSI, NFS, FC, NVMe-oF...) would need os-brick to connect the host
  first; novalite does not do that, and says so (``VolumeAttachFailed``).

Every volume disk carries the volume's id as its ``<serial>`` (the guest finds it
under /dev/disk/by-id) and the user alias ``ua-<volume id>`` that libvirt names it by in
its device-removed events. The host's side of an attachment, the connector Cinder is
given, comes from os-brick here too (:func:`connector_properties`).
"""
from __future__ import annotations

import logging as std_logging
import os
import threading
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import cachetools
import libvirt
from oslo_log import log as logging
from oslo_service import loopingcall

from novalite import exception, objects
from novalite.conf import CONF
from novalite.virt import driver
from novalite.virt.libvirt import config

if TYPE_CHECKING:
    from novalite.virt.libvirt.guest import Guest
    from novalite.virt.libvirt.host import Host

LOG = logging.getLogger(__name__)

SUPPORTED_TYPES = ('rbd',)
# libvirt keeps aliases that start with this as given ("user aliases").
ALIAS_PREFIX = 'ua-'
DEFAULT_ROOT = '/dev/vda'
# A swap's block copy: how often its progress is read, and how long it may take to
# get ready (a 1 GiB RBD volume copies in about 10 s here).
COPY_POLL_INTERVAL = 0.5
COPY_TIMEOUT = 3600


# -- one volume --------------------------------------------------------------------------

def volume_id(connection_info: driver.ConnectionInfo) -> str | None:
    """The volume's id: the ``serial`` the compute manager adds, else Cinder's own."""
    data = connection_info.get('data') or {}
    return connection_info.get('serial') or data.get('volume_id')


def target_dev(mountpoint: str) -> str:
    """``/dev/vdb`` -> ``vdb``."""
    return mountpoint.rpartition('/')[2]


def alias(vol_id: str) -> str:
    return ALIAS_PREFIX + vol_id


def disk_config(connection_info: driver.ConnectionInfo, mountpoint: str,
                disk_bus: str | None = None,
                device_type: str | None = None) -> config.GuestDisk:
    """The domain's disk for a volume at ``mountpoint``.

    :raises VolumeAttachFailed: the volume type is not one novalite's libvirt driver
        opens, or the connection info is not usable
    """
    known_id = volume_id(connection_info)
    vol_id = known_id or '(unknown)'
    volume_type = connection_info.get('driver_volume_type')
    if volume_type not in SUPPORTED_TYPES:
        raise exception.VolumeAttachFailed(
            volume_id=vol_id,
            reason="volume driver %s is not supported by novalite's libvirt driver "
                   "(supported: %s)" % (volume_type, ', '.join(SUPPORTED_TYPES)))
    data = connection_info.get('data') or {}
    if not data.get('name'):
        raise exception.VolumeAttachFailed(
            volume_id=vol_id, reason='the connection info names no RBD image')
    access_mode = data.get('access_mode') or 'rw'
    if access_mode not in ('ro', 'rw'):
        raise exception.VolumeAttachFailed(
            volume_id=vol_id, reason='unknown access mode %s' % access_mode)
    device = device_type or 'disk'
    if device not in ('disk', 'cdrom'):
        raise exception.VolumeAttachFailed(
            volume_id=vol_id, reason='device type %s is not supported' % device)
    source = config.NetworkSource(
        protocol=volume_type, name=data['name'],
        hosts=[str(h) for h in data.get('hosts') or []],
        ports=[str(p) for p in data.get('ports') or []])
    _set_rbd_auth(source, data, vol_id)
    if data.get('qos_specs'):
        LOG.debug('QoS specs of volume %s are not applied by novalite', vol_id)
    return config.GuestDisk(
        path='', format='raw', target_dev=target_dev(mountpoint),
        bus=disk_bus or ('virtio' if device == 'disk' else 'ide'),
        network=source, device=device, serial=known_id,
        # Nova's default for volumes: no cache on this host (QEMU turns librbd's off),
        # so a write the guest was told is done is in Ceph.
        cache='none', discard='unmap' if data.get('discard') is True else None,
        readonly=access_mode == 'ro', alias=alias(known_id) if known_id else None)


def _set_rbd_auth(source: config.NetworkSource, data: dict[str, Any], vol_id: str) -> None:
    """cephx credentials: Cinder's, else the host's ``[libvirt]`` ones (as Nova)."""
    secret_type = data.get('secret_type') or 'ceph'
    if data.get('auth_enabled'):
        if data.get('secret_uuid'):
            source.auth_username = data.get('auth_username')
            source.secret_uuid = data['secret_uuid']
        else:
            LOG.debug('Volume %s: Cinder sends no secret_uuid; using [libvirt] rbd_user '
                      'and rbd_secret_uuid', vol_id)
            source.auth_username = CONF.libvirt.rbd_user
            source.secret_uuid = CONF.libvirt.rbd_secret_uuid
        source.secret_type = secret_type
    elif CONF.libvirt.rbd_secret_uuid:
        LOG.warning('Volume %s: Cinder sends no cephx auth; using [libvirt] rbd_user and '
                    'rbd_secret_uuid (configure Cinder\'s rbd_user and rbd_secret_uuid '
                    'instead)', vol_id)
        source.auth_username = CONF.libvirt.rbd_user
        source.secret_uuid = CONF.libvirt.rbd_secret_uuid
        source.secret_type = secret_type
    if (data.get('auth_enabled') or source.auth_username) and not source.secret_uuid:
        raise exception.VolumeAttachFailed(
            volume_id=vol_id, reason='cephx user %s has no libvirt secret: set Cinder\'s '
                                     'rbd_secret_uuid or [libvirt] rbd_secret_uuid'
                                     % (source.auth_username or data.get('auth_username')))


# -- block_device_info ---------------------------------------------------------------------

def mappings(block_device_info: driver.BlockDeviceInfo | None) -> list[driver.VolumeMapping]:
    """The volume mappings, the root (boot index 0) first, then by device name."""
    found = list((block_device_info or {}).get('block_device_mapping') or [])

    def order(bdm: driver.VolumeMapping) -> tuple[int, str]:
        boot_index = bdm.get('boot_index')
        return (0 if boot_index == 0 else 1, bdm.get('mount_device') or '')
    return sorted(found, key=order)


def root_mapping(block_device_info: driver.BlockDeviceInfo | None
                 ) -> driver.VolumeMapping | None:
    """The mapping the instance boots from, when it boots from a volume."""
    for bdm in mappings(block_device_info):
        if bdm.get('boot_index') == 0:
            return bdm
    return None


def guest_disks(block_device_info: driver.BlockDeviceInfo | None) -> list[config.GuestDisk]:
    """The disks of every mapped volume, the root volume first (at the root device
    name, ``/dev/vda`` by default)."""
    disks = []
    root_name = (block_device_info or {}).get('root_device_name') or DEFAULT_ROOT
    for bdm in mappings(block_device_info):
        mountpoint = bdm.get('mount_device') or (
            root_name if bdm.get('boot_index') == 0 else None)
        if not mountpoint:
            raise exception.VolumeAttachFailed(
                volume_id=bdm.get('volume_id'), reason='the mapping has no device name')
        disks.append(disk_config(bdm['connection_info'], mountpoint, bdm.get('disk_bus'),
                                 bdm.get('device_type')))
    return disks


# -- a domain's disks --------------------------------------------------------------------

def find_disk(domain_xml: str, dev: str, vol_id: str | None = None) -> ET.Element | None:
    """The ``<disk>`` of the volume in a domain's XML: by its alias if the volume's id is
    known, else (or for a disk attached without one) by its target device."""
    devices = ET.fromstring(domain_xml).find('devices')
    if devices is None:
        return None
    disks = devices.findall('disk')
    if vol_id:
        for disk in disks:
            element = disk.find('alias')
            if element is not None and element.get('name') == alias(vol_id):
                return disk
    for disk in disks:
        target = disk.find('target')
        if target is not None and target.get('dev') == dev:
            return disk
    return None


def used_targets(disks: list[config.GuestDisk]) -> set[str]:
    return {disk.target_dev for disk in disks}


def free_target(taken: set[str], prefix: str = 'vd') -> str:
    """The first ``vdX`` name no disk has."""
    for letter in 'bcdefghijklmnopqrstuvwxyz':
        if prefix + letter not in taken:
            return prefix + letter
    raise exception.NovaliteException('no free disk device name left')


# -- attach and detach -------------------------------------------------------------------

def attach(host: Host, instance: objects.Instance, connection_info: driver.ConnectionInfo,
           mountpoint: str, disk_bus: str | None = None,
           device_type: str | None = None) -> None:
    """Add the volume's disk to the domain's definition and, when it runs, to the guest.

    :raises VolumeAttachFailed: the disk cannot be made or libvirt refused it
    """
    vol_id = volume_id(connection_info) or '(unknown)'
    guest = host.get_guest(instance.uuid)
    disk = disk_config(connection_info, mountpoint, disk_bus, device_type)
    live = guest.is_active()
    views = [guest.persistent_xml()] + ([guest.xml()] if live else [])
    present = [find_disk(xml, disk.target_dev) for xml in views]
    if all(d is not None and d.findtext('serial') == disk.serial for d in present):
        LOG.info('Volume %s is at %s of %s already', vol_id, mountpoint, instance.uuid)
        return
    if any(d is not None for d in present):
        raise exception.VolumeAttachFailed(
            volume_id=vol_id, reason='the guest already has a disk at %s' % mountpoint)
    xml = config.disk_xml(disk)
    try:
        guest.attach_device(xml, persistent=True, live=live)
    except libvirt.libvirtError as exc:
        if exc.get_error_code() == libvirt.VIR_ERR_NO_SUPPORT and host.is_test:
            _edit_definition(host, guest, disk.target_dev, add=ET.fromstring(xml))
        else:
            LOG.warning('libvirt refused volume %s at %s of %s: %s', vol_id, mountpoint,
                        instance.uuid, exc.get_error_message())
            raise exception.VolumeAttachFailed(
                volume_id=vol_id, reason=exc.get_error_message()) from exc
    LOG.info('Volume %s attached at %s of %s (%s)', vol_id, mountpoint, instance.uuid,
             'live and persistent' if live else 'persistent: the guest is stopped')


def detach(host: Host, instance: objects.Instance, connection_info: driver.ConnectionInfo,
           mountpoint: str) -> None:
    """Remove the volume's disk from the definition, then from the running guest,
    waiting for the guest to release it (``[libvirt] device_detach_attempts`` requests,
    ``device_detach_timeout`` seconds each, plus the 5 s libvirt's QEMU driver itself
    waits inside each request: 2 requests of 3 s took 16 s against a guest that never
    let go). A disk or guest already gone is detached.

    :raises DeviceDetachFailed: libvirt refused, or the guest kept the disk
    """
    dev, vol_id = target_dev(mountpoint), volume_id(connection_info)
    try:
        guest = host.get_guest(instance.uuid)
    except exception.InstanceNotFound:
        LOG.warning('Instance %s has no domain: volume %s is detached', instance.uuid, vol_id)
        return
    persistent = find_disk(guest.persistent_xml(), dev, vol_id)
    live = find_disk(guest.xml(), dev, vol_id) if guest.is_active() else None
    if persistent is None and live is None:
        LOG.info('Instance %s has no disk %s (volume %s): detached already',
                 instance.uuid, dev, vol_id)
        return
    if persistent is not None:
        try:
            _detach_once(guest, persistent, dev, persistent=True)
        except libvirt.libvirtError as exc:
            if not (exc.get_error_code() == libvirt.VIR_ERR_NO_SUPPORT and host.is_test):
                raise exception.DeviceDetachFailed(device=dev,
                                                   reason=exc.get_error_message()) from exc
            _edit_definition(host, guest, dev)
    if live is not None:
        _detach_live(host, guest, live, dev, vol_id)
    LOG.info('Volume %s detached from %s of %s', vol_id, dev, instance.uuid)


def swap(host: Host, instance: objects.Instance, old_connection_info: driver.ConnectionInfo,
         new_connection_info: driver.ConnectionInfo, mountpoint: str, resize_to: int) -> None:
    """Move the guest's disk at ``mountpoint`` from the old volume to the new one.

    A running guest keeps running: libvirt's block copy mirrors the disk onto the new
    volume (an existing RBD image: ``REUSE_EXT``), and once the mirror is ready the
    guest is pivoted onto it. A larger new volume (``resize_to``) is copied to as a
    slice of the old size, since QEMU mirrors only onto a target of the same size; the
    running guest keeps seeing the old size (QEMU cannot grow a sliced disk), and
    sees the new one from its next start (Nova grows it at once, which QEMU 7.2 with
    libvirt 9 refuses). The copy is a transient job
    (``VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB``): the domain stays defined throughout
    instead of being undefined as Nova does.
    The definition then gets the new volume's disk (its serial and alias). A guest
    that is not running has its definition changed only.

    :raises VolumeBDMPathNotFound: the guest has no disk at ``mountpoint``
    :raises VolumeAttachFailed: the new volume is encrypted, its disk cannot be made,
        or the copy failed (the guest is left on the old volume)
    """
    dev = target_dev(mountpoint)
    old_id, new_id = volume_id(old_connection_info), volume_id(new_connection_info)
    if (new_connection_info.get('data') or {}).get('encrypted'):
        raise exception.VolumeAttachFailed(
            volume_id=new_id, reason='encrypted volumes are not supported by novalite')
    guest = host.get_guest(instance.uuid)
    old_disk = find_disk(guest.persistent_xml(), dev, old_id)
    if old_disk is None:
        raise exception.VolumeBDMPathNotFound(path=mountpoint)
    target = old_disk.find('target')
    bus = target.get('bus') if target is not None else None
    new_disk = disk_config(new_connection_info, mountpoint, bus, old_disk.get('device'))
    new_xml = config.disk_xml(new_disk)
    if guest.is_active():
        domain = host.get_connection().lookupByUUIDString(instance.uuid)
        try:
            copy_xml = _sliced(new_xml, domain.blockInfo(dev, 0)[0]) if resize_to \
                else new_xml
            _copy_and_pivot(domain, dev, copy_xml, new_id or '(unknown)')
        except libvirt.libvirtError as exc:
            if not (exc.get_error_code() == libvirt.VIR_ERR_NO_SUPPORT and host.is_test):
                raise exception.VolumeAttachFailed(
                    volume_id=new_id, reason='block copy to it failed: %s'
                                             % exc.get_error_message()) from exc
            LOG.info('The libvirt test driver cannot copy disk %s of running %s: the '
                     'definition only is changed', dev, instance.uuid)
        else:
            if resize_to:
                LOG.info('%s of %s is on the %d GiB volume %s; the guest sees the old '
                         'size until it is started again', dev, instance.uuid, resize_to,
                         new_id)
    _replace_in_definition(host, guest, dev, old_id, ET.fromstring(new_xml))
    LOG.info('Volume %s at %s of %s swapped for %s%s', old_id, mountpoint, instance.uuid,
             new_id, '' if guest.is_active() else ' (definition only: not running)')


def _sliced(disk_xml: str, size: int) -> str:
    """The disk of ``disk_xml`` limited to its first ``size`` bytes (a storage slice):
    QEMU's mirror wants a target of the source's size, and refuses to resize a sliced
    raw disk afterwards (QEMU 7.2: "Cannot resize fixed-size raw disks")."""
    disk = ET.fromstring(disk_xml)
    source = disk.find('source')
    assert source is not None, disk_xml
    slices = ET.SubElement(source, 'slices')
    ET.SubElement(slices, 'slice', type='storage', offset='0', size=str(size))
    return ET.tostring(disk, encoding='unicode')


def _copy_and_pivot(domain: libvirt.virDomain, dev: str, new_xml: str, new_id: str) -> None:
    """Mirror ``dev`` onto the disk of ``new_xml``, wait until the mirror is ready, pivot.
    A copy that fails or does not get ready is aborted (the guest stays on its disk).

    :raises libvirt.libvirtError:
    :raises VolumeAttachFailed: the copy ended or stalled without getting ready
    """
    try:
        # A job a crash left behind would refuse the copy.
        domain.blockJobAbort(dev, 0)
    except libvirt.libvirtError:
        pass
    flags = libvirt.VIR_DOMAIN_BLOCK_COPY_REUSE_EXT | \
        libvirt.VIR_DOMAIN_BLOCK_COPY_TRANSIENT_JOB
    domain.blockCopy(dev, new_xml, None, flags)
    try:
        _wait_for_mirror(domain, dev, new_id)
        domain.blockJobAbort(dev, libvirt.VIR_DOMAIN_BLOCK_JOB_ABORT_PIVOT)
    except Exception:
        try:
            domain.blockJobAbort(dev, 0)
        except libvirt.libvirtError as exc:
            LOG.warning('Could not abort the block copy of %s: %s', dev,
                        exc.get_error_message())
        raise


def _wait_for_mirror(domain: libvirt.virDomain, dev: str, new_id: str) -> None:
    """Until the copy job of ``dev`` has copied everything and libvirt says the mirror
    is ready (``<mirror ready='yes'>``), polled every COPY_POLL_INTERVAL seconds for up
    to COPY_TIMEOUT."""
    def poll() -> None:
        info = domain.blockJobInfo(dev, 0)
        if not info:
            raise exception.VolumeAttachFailed(
                volume_id=new_id, reason='the block copy of %s ended before it was ready'
                                         % dev)
        if info.get('cur') == info.get('end'):
            disk = find_disk(domain.XMLDesc(0), dev)
            mirror = disk.find('mirror') if disk is not None else None
            if mirror is not None and mirror.get('ready') == 'yes':
                raise loopingcall.LoopingCallDone()
        LOG.debug('Block copy of %s: %s of %s bytes', dev, info.get('cur'), info.get('end'))

    timer = loopingcall.FixedIntervalWithTimeoutLoopingCall(poll)
    try:
        timer.start(interval=COPY_POLL_INTERVAL, timeout=COPY_TIMEOUT).wait()
    except loopingcall.LoopingCallTimeOut as exc:
        raise exception.VolumeAttachFailed(
            volume_id=new_id, reason='the block copy of %s was not ready after %d s'
                                     % (dev, COPY_TIMEOUT)) from exc


def _replace_in_definition(host: Host, guest: Guest, dev: str, old_id: str | None,
                           new_disk: ET.Element) -> None:
    """Define the domain again with ``new_disk`` where the old volume's disk was,
    at the same guest address and boot order (a running domain's live devices are
    not touched)."""
    domain = ET.fromstring(guest.persistent_xml())
    devices = domain.find('devices')
    disks = devices.findall('disk') if devices is not None else []

    def matches(disk: ET.Element) -> bool:
        alias_el, target = disk.find('alias'), disk.find('target')
        if old_id and alias_el is not None and alias_el.get('name') == alias(old_id):
            return True
        return target is not None and target.get('dev') == dev
    old = next((d for d in disks if matches(d)), None)
    assert devices is not None and old is not None, 'the caller found the disk'
    for kept in ('address', 'boot'):
        element = old.find(kept)
        if element is not None and new_disk.find(kept) is None:
            new_disk.append(element)
    devices[list(devices).index(old)] = new_disk
    host.define(ET.tostring(domain, encoding='unicode'))


def _detach_once(guest: Guest, disk: ET.Element, dev: str, persistent: bool) -> bool:
    """Ask libvirt to detach; False when the disk was not there (any more)."""
    try:
        guest.detach_device(ET.tostring(disk, encoding='unicode'),
                            persistent=persistent, live=not persistent)
    except libvirt.libvirtError as exc:
        code, message = exc.get_error_code(), exc.get_error_message() or ''
        if code == libvirt.VIR_ERR_DEVICE_MISSING or code == libvirt.VIR_ERR_NO_DOMAIN or (
                code == libvirt.VIR_ERR_OPERATION_FAILED and 'not found' in message):
            LOG.debug('Disk %s of %s is gone already: %s', dev, guest.uuid, message)
            return False
        if code == libvirt.VIR_ERR_INTERNAL_ERROR and 'already in the process of unplug' \
                in message:
            # An earlier request is still under way: wait for it.
            return True
        raise
    return True


def _detach_live(host: Host, guest: Guest, disk: ET.Element, dev: str,
                 vol_id: str | None) -> None:
    alias_el = disk.find('alias')
    device_alias = alias_el.get('name', dev) if alias_el is not None else dev
    attempts = CONF.libvirt.device_detach_attempts
    for attempt in range(1, attempts + 1):
        waiter = host.expect_device_removal(guest.uuid, device_alias)
        try:
            try:
                if not _detach_once(guest, disk, dev, persistent=False):
                    return
            except libvirt.libvirtError as exc:
                if exc.get_error_code() == libvirt.VIR_ERR_NO_SUPPORT and host.is_test:
                    LOG.info('The libvirt test driver cannot detach %s from running %s: '
                             'it is gone from the definition only', dev, guest.uuid)
                    return
                raise exception.DeviceDetachFailed(
                    device=dev, reason=exc.get_error_message()) from exc
            if find_disk(guest.xml(), dev, vol_id) is not None:
                waiter.wait(CONF.libvirt.device_detach_timeout)
            if waiter.failed:
                raise exception.DeviceDetachFailed(
                    device=dev, reason='the guest refused to release it (libvirt sent '
                                       'device-removal-failed)')
        finally:
            host.forget_device_removal(waiter)
        if find_disk(guest.xml(), dev, vol_id) is None:
            return
        LOG.debug('Disk %s still in running %s after request %d of %d', dev, guest.uuid,
                  attempt, attempts)
    raise exception.DeviceDetachFailed(
        device=dev, reason='the guest did not release it after %d requests, each '
                           'awaited %d s' % (attempts, CONF.libvirt.device_detach_timeout))


def _edit_definition(host: Host, guest: Guest, dev: str,
                     add: ET.Element | None = None) -> None:
    """What the test driver does instead of device calls, which it lacks: define the
    domain again with the disk ``add`` added, or the disk at ``dev`` removed (a running
    test domain keeps its live devices)."""
    domain = ET.fromstring(guest.persistent_xml())
    devices = domain.find('devices')
    if devices is None:
        devices = ET.SubElement(domain, 'devices')
    if add is not None:
        devices.append(add)
    else:
        for disk in devices.findall('disk'):
            target = disk.find('target')
            if target is not None and target.get('dev') == dev:
                devices.remove(disk)
    host.define(ET.tostring(domain, encoding='unicode'))
    LOG.info('libvirt test driver (no device calls): disk %s %s the definition of %s',
             dev, 'added to' if add is not None else 'removed from', guest.uuid)


# -- the host's connector --------------------------------------------------------------

_connector_lock = threading.Lock()
_privsep_ready = False


@cachetools.cached(cachetools.LRUCache(maxsize=8), lock=threading.Lock())
def _connector(my_ip: str, host: str, multipath: bool) -> dict[str, Any]:
    # Imported here: os-brick loads every connector module, which only a host that
    # attaches volumes should pay for.
    from os_brick.initiator import connector
    _init_privsep()
    root_helper = '' if os.geteuid() == 0 else 'sudo'
    # Each connector os-brick knows looks for its initiator, and warns when the host
    # has none (no iSCSI initiator name, no NVMe multipath): normal on a host whose
    # volumes are all RBD, which needs none. What was found is logged below.
    connectors_log = std_logging.getLogger('os_brick.initiator.connectors')
    level = connectors_log.level
    connectors_log.setLevel(std_logging.ERROR)
    try:
        props = connector.get_connector_properties(root_helper, my_ip, multipath,
                                                   enforce_multipath=True, host=host)
    finally:
        connectors_log.setLevel(level)
    LOG.info('Volume connector of host %s: ip %s, platform %s, multipath %s, iSCSI '
             'initiator %s, NVMe host NQN %s', host, props.get('ip'), props.get('platform'),
             props.get('multipath'), props.get('initiator'), props.get('nqn'))
    return props


def _init_privsep() -> None:
    """Run os-brick's privileged calls in this process when it is root (as os-vif's,
    see ``vif.py``); otherwise oslo.privsep starts ``sudo privsep-helper`` on first use
    (or ``[privsep_osbrick] helper_command``), as in Nova."""
    global _privsep_ready
    with _connector_lock:
        if _privsep_ready:
            return
        if os.geteuid() == 0:
            import os_brick.privileged
            os_brick.privileged.default.set_client_mode(False)
            os_brick.privileged.brick_privsep_hide_output.set_client_mode(False)
        _privsep_ready = True


def connector_properties(host: str, my_ip: str | None = None,
                         multipath: bool | None = None) -> dict[str, Any]:
    """What this host tells Cinder when a volume is attached to one of its guests:
    os-brick's ``get_connector_properties`` (host, ip, platform, os_type, multipath, and
    each initiator it finds: iSCSI initiator name, NVMe NQN...), read once per process
    and arguments (it runs a handful of commands, and on first use writes the host's
    NVMe host NQN and id under /etc/nvme if ``nvme`` is installed).

    :returns: a copy, which the caller may extend (``mountpoint``, ``mode``)
    """
    return dict(_connector(my_ip or CONF.my_ip, host,
                           CONF.libvirt.volume_use_multipath if multipath is None
                           else multipath))
