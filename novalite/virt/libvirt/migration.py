"""Resize and cold migration on libvirt: the instance's files set aside, copied, resized.

The source stops the guest, renames the instance directory to ``<dir>_resize`` (kept
until the resize is confirmed, so a revert finds it) and saves the domain's XML there.
The destination copies that directory into its own instance directory, grows the disks
to the new flavor and defines the domain again with the new memory and vCPUs. Between
hosts, novalite copies the files through the file system: the source's ``_resize``
directory must be reachable from the destination (simulated hosts on one machine, or a
shared instances path); otherwise the destination says so and the resize is undone.
"""
from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET

from oslo_concurrency import processutils
from oslo_log import log as logging

from novalite import exception, objects
from novalite.virt.libvirt import config

LOG = logging.getLogger(__name__)

RESIZE_SUFFIX = '_resize'
SAVED_XML = 'domain.xml'
GiB = 1024 ** 3
# Disks of an instance directory and the flavor field that sizes each.
_DISK_SIZES = (('disk', 'root_gb'), ('disk.eph0', 'ephemeral_gb'))


def resize_dir(instance_dir: str) -> str:
    return instance_dir.rstrip('/') + RESIZE_SUFFIX


def check_disks_fit(instance: objects.Instance, flavor: objects.Flavor,
                    volume_backed: bool = False) -> None:
    """:raises CannotResizeDisk: a disk of the new flavor is smaller (libvirt cannot
    shrink a disk safely); the root of an instance that boots from a volume is not
    on this host, and its size not the flavor's"""
    for name, field in _DISK_SIZES:
        if volume_backed and name == 'disk':
            continue
        if getattr(flavor, field) < getattr(instance.flavor, field):
            raise exception.CannotResizeDisk(reason='Unable to resize disk down.')


def set_aside(instance_dir: str, domain_xml: str) -> str:
    """Move the instance directory to ``<dir>_resize`` with the domain XML in it.

    :returns: the ``_resize`` directory
    """
    aside = resize_dir(instance_dir)
    if os.path.exists(aside):
        LOG.warning('Removing %s, left by an earlier resize', aside)
        shutil.rmtree(aside)
    os.rename(instance_dir, aside)
    with open(os.path.join(aside, SAVED_XML), 'w') as f:
        f.write(domain_xml)
    return aside


def copy_in(source_dir: str, instance_dir: str) -> None:
    """Copy the set-aside files into this host's instance directory.

    :raises MigrationError: the source directory cannot be reached from here
    """
    if not os.path.isdir(source_dir):
        raise exception.MigrationError(
            reason='the instance files in %s cannot be reached from this host; novalite '
                   'copies them between hosts only through a shared file system'
                   % source_dir)
    if os.path.exists(instance_dir):
        shutil.rmtree(instance_dir)
    # Contents and permission bits only, not the extended attributes (copytree's
    # default, copy2, copies them): libvirt keeps its DAC bookkeeping of a disk in use
    # there (trusted.libvirt.security.*). Copied from a disk whose guest libvirt has not
    # finished tearing down, they make the new domain's start fail with "Setting
    # different DAC user or group on ... which is already in use".
    shutil.copytree(source_dir, instance_dir, copy_function=shutil.copy,
                    ignore=shutil.ignore_patterns(SAVED_XML))


def grow_disks(instance_dir: str, flavor: objects.Flavor, qemu_img: str | None) -> None:
    """Grow each disk to the new flavor's size (never shrink: checked on the source)."""
    for name, field in _DISK_SIZES:
        path = os.path.join(instance_dir, name)
        wanted = getattr(flavor, field) * GiB
        if not wanted or not os.path.exists(path):
            continue
        if qemu_img is not None:
            try:
                processutils.execute(qemu_img, 'resize', path, str(wanted))
            except processutils.ProcessExecutionError as exc:
                # A disk already at least that big: nothing to grow.
                LOG.debug('qemu-img resize of %s: %s', path, exc.stderr)
        elif os.path.getsize(path) < wanted:
            os.truncate(path, wanted)


def restore(instance_dir: str) -> str:
    """Put the set-aside directory back in place. :returns: the saved domain XML"""
    aside = resize_dir(instance_dir)
    with open(os.path.join(aside, SAVED_XML)) as f:
        domain_xml = f.read()
    if os.path.exists(instance_dir):
        shutil.rmtree(instance_dir)
    os.rename(aside, instance_dir)
    os.unlink(os.path.join(instance_dir, SAVED_XML))
    return domain_xml


def resized_xml(domain_xml: str, flavor: objects.Flavor, old_dir: str, new_dir: str) -> str:
    """The domain XML with the new flavor's memory and vCPUs, its files under
    ``new_dir`` instead of ``old_dir``."""
    domain = ET.fromstring(domain_xml)
    for tag in ('memory', 'currentMemory'):
        element = domain.find(tag)
        if element is not None:
            element.set('unit', 'KiB')
            element.text = str(flavor.memory_mb * 1024)
    vcpu = domain.find('vcpu')
    if vcpu is not None:
        vcpu.text = str(flavor.vcpus)
    for element in domain.iter():
        for attr in ('file', 'path'):
            value = element.get(attr)
            if value and value.startswith(old_dir):
                element.set(attr, new_dir + value[len(old_dir):])
        if element.tag in ('kernel', 'initrd') and element.text and \
                element.text.startswith(old_dir):
            element.text = new_dir + element.text[len(old_dir):]
    _set_flavor_metadata(domain, flavor)
    return ET.tostring(domain, encoding='unicode')


def _set_flavor_metadata(domain: ET.Element, flavor: objects.Flavor) -> None:
    element = domain.find('metadata/%s/%s' % (config._q('instance'), config._q('flavor')))
    if element is None:
        return
    if flavor.name is not None:
        element.set('name', flavor.name)
    values = {'memory': flavor.memory_mb, 'disk': flavor.root_gb, 'swap': flavor.swap,
              'ephemeral': flavor.ephemeral_gb, 'vcpus': flavor.vcpus}
    for key, value in values.items():
        child = element.find(config._q(key))
        if child is not None:
            child.text = str(value)
