"""Rescue on libvirt: the domain boots a rescue image, the instance's own disk second.

As Nova's libvirt driver does it: the domain's definition is kept in the instance
directory (``unrescue.xml``), a rescue disk is made from the rescue image
(``disk.rescue``), and the domain is redefined to boot that disk as ``vda`` with the
root disk as ``vdb``. Unrescue defines the kept XML again and removes the rescue files.
On ``test:///`` the same domains are defined and started; their disks are never read.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.virt.libvirt import config, machine_type, serial

if TYPE_CHECKING:
    from novalite.context import RequestContext
    from novalite.virt.libvirt.driver import LibvirtDriver

LOG = logging.getLogger(__name__)

UNRESCUE_XML = 'unrescue.xml'
RESCUE_DISK = 'disk.rescue'
_RESCUE_FILES = (RESCUE_DISK, 'kernel.rescue', 'ramdisk.rescue', UNRESCUE_XML)


def root_disk(xml: str, instance_uuid: str) -> config.GuestDisk:
    """The first disk of a domain definition (its boot disk)."""
    for disk in ET.fromstring(xml).iter('disk'):
        source, driver = disk.find('source'), disk.find('driver')
        if disk.get('device', 'disk') == 'disk' and disk.get('type') == 'network':
            raise exception.InstanceNotRescuable(
                instance_id=instance_uuid, reason='it boots from a volume')
        if disk.get('device', 'disk') == 'disk' and source is not None:
            fmt = driver.get('type', 'raw') if driver is not None else 'raw'
            return config.GuestDisk(source.get('file', ''), fmt, 'vdb')
    raise exception.InstanceNotRescuable(instance_id=instance_uuid,
                                         reason='its domain has no disk')


def rescue(drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
           image_meta: objects.ImageMeta) -> None:
    """Boot ``instance`` from ``image_meta``; its guest must be off already.

    On failure the original definition is put back and the rescue files removed, so
    a hard reboot brings the instance back as it was.
    """
    directory = drv.instance_dir(instance)
    guest = drv.host.get_guest(instance.uuid)
    original = guest.persistent_xml()
    saved = os.path.join(directory, UNRESCUE_XML)
    with open(saved, 'w') as f:
        f.write(original)
    try:
        xml = _rescue_xml(drv, context, instance, image_meta, original, directory)
        guest.poweroff()
        guest = drv.host.define(xml)
        guest.launch()
        drv._wait_running(guest)
    except Exception:
        LOG.warning('Rescue of %s failed; restoring its domain', instance.uuid)
        _restore_definition(drv, instance, original)
        _remove_rescue_files(directory)
        raise
    LOG.info('Instance %s is rescued (image %s)', instance.uuid, image_meta.id)


def _rescue_xml(drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
                image_meta: objects.ImageMeta, original: str, directory: str) -> str:
    if not image_meta.id:
        raise exception.InstanceNotRescuable(instance_id=instance.uuid,
                                             reason='the rescue image has no id')
    base = drv.image_cache.fetch(context, image_meta.id)
    disk = drv.image_backend.create_root(base, image_meta.disk_format,
                                         os.path.join(directory, RESCUE_DISK),
                                         instance.flavor.root_gb)
    disks = [config.GuestDisk(disk.path, disk.format, 'vda'), root_disk(original, instance.uuid)]
    properties = image_meta.properties or {}
    kernel = drv._copy_image(context, properties.get('kernel_id'), directory,
                             'kernel.rescue')
    initrd = drv._copy_image(context, properties.get('ramdisk_id'), directory,
                             'ramdisk.rescue')
    # The rescued guest keeps the serial console port of the domain it replaces.
    ports = serial.tcp_ports(original)
    return config.guest_config(
        instance, drv.virt_type, disks, os.path.join(directory, 'console.log'),
        image_meta=image_meta, kernel=kernel, initrd=initrd,
        serial_port=ports[0] if ports else None,
        # The rescued guest keeps the machine type recorded for the server.
        machine_type=(instance.system_metadata or {}).get(machine_type.SYSMETA_KEY)).to_xml()


def unrescue(drv: LibvirtDriver, instance: objects.Instance) -> None:
    """Boot ``instance`` from its own disk again.

    :raises InstanceNotRescuable: there is no kept definition to go back to
    """
    directory = drv.instance_dir(instance)
    saved = os.path.join(directory, UNRESCUE_XML)
    if not os.path.exists(saved):
        raise exception.NovaliteException(
            'Instance %s has no saved domain to unrescue to (%s is missing)'
            % (instance.uuid, saved))
    with open(saved) as f:
        original = f.read()
    guest = drv.host.get_guest(instance.uuid)
    guest.poweroff()
    guest = drv.host.define(original)
    guest.launch()
    drv._wait_running(guest)
    _remove_rescue_files(directory)
    LOG.info('Instance %s is unrescued', instance.uuid)


def _restore_definition(drv: LibvirtDriver, instance: objects.Instance, original: str) -> None:
    try:
        drv.host.get_guest(instance.uuid).poweroff()
        drv.host.define(original)
    except Exception:
        LOG.exception('Could not restore the domain of %s', instance.uuid)


def _remove_rescue_files(directory: str) -> None:
    for name in _RESCUE_FILES:
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass
