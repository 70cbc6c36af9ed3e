"""QEMU machine types of instances, as Nova's libvirt driver keeps them.

The machine type is the guest's virtual chipset (``pc``, ``q35``, ``virt``, or a
versioned one such as ``pc-q35-8.2``). The driver picks it at a guest's first spawn (the
image's ``hw_machine_type``, else ``[libvirt] hw_machine_type`` for the guest's
architecture, else Nova's default for it, else libvirt's) and records it in the
instance's system metadata as ``image_hw_machine_type``: from then on the guest keeps
it, whatever the configuration or the hosts' defaults become. ``novalite-manage
libvirt`` reads, changes and lists what is recorded (the functions below the driver's).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import versionutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.context import RequestContext
    from novalite.virt.libvirt.driver import LibvirtDriver

LOG = logging.getLogger(__name__)

SYSMETA_KEY = 'image_hw_machine_type'

# The machine types update_machine_type accepts (checked without a host, as Nova does):
# the aliases Nova defaults to and their versioned forms, RHEL's included.
SUPPORTED_TYPE_PATTERNS = (
    r'^pc$', r'^q35$', r'^virt$', r'^s390-ccw-virtio$',
    r'^pc-\d+.\d+', r'^pc-i440fx-\d+.\d+', r'^pc-q35-\d+.\d+', r'^virt-\d+.\d+',
    r'^s390-ccw-virtio-\d+.\d+',
    r'^pc-i440fx-rhel\d.\d+.\d+', r'^pc-q35-rhel\d.\d+.\d+',
)
# Nova's defaults per guest architecture (x86 stays on pc, as Nova's).
DEFAULT_TYPES = {'x86_64': 'pc', 'i686': 'pc', 'aarch64': 'virt', 'armv7l': 'virt',
                 's390': 's390-ccw-virtio', 's390x': 's390-ccw-virtio'}
# The states an instance's machine type may be changed in: its guest is not running.
ALLOWED_UPDATE_VM_STATES = (vm_states.STOPPED, vm_states.SHELVED,
                            vm_states.SHELVED_OFFLOADED)
_VERSION = re.compile(r'\d+\.\d+\.\d+$|\d+\.\d+$')


class UnsupportedMachineType(exception.Invalid):
    msg_fmt = 'Machine type %(machine_type)s is not supported.'


class InvalidMachineTypeUpdate(exception.Invalid):
    msg_fmt = ('Cannot update machine type %(existing_machine_type)s to '
               '%(machine_type)s.')


# -- the driver's side: choose and record at spawn ------------------------------------

def configured_type(arch: str) -> str | None:
    """``[libvirt] hw_machine_type``'s entry for ``arch``, else Nova's default."""
    for mapping in CONF.libvirt.hw_machine_type or ():
        host_arch, _sep, machine_type = mapping.partition('=')
        if not machine_type:
            LOG.warning('Invalid [libvirt] hw_machine_type entry %r (arch=machine_type)',
                        mapping)
        elif host_arch.strip() == arch:
            return machine_type.strip()
    return DEFAULT_TYPES.get(arch)


def libvirt_default(capabilities_xml: str, arch: str, virt_type: str) -> str | None:
    """The first machine type libvirt lists for ``arch`` and the domain type (libvirt
    puts the emulator's default first), or None."""
    caps = ET.fromstring(capabilities_xml)
    for arch_el in caps.iterfind('guest/arch'):
        if arch_el.get('name') != arch:
            continue
        domains = [d.get('type') for d in arch_el.iterfind('domain')]
        if virt_type not in domains and 'qemu' not in domains:
            continue
        for machine in arch_el.iterfind('machine'):
            if machine.text:
                return machine.text.strip()
    return None


def for_spawn(instance: objects.Instance, image_meta: objects.ImageMeta | None,
              host_arch: str, capabilities: Callable[[], str],
              virt_type: str) -> str | None:
    """The machine type of ``instance``'s guest, recorded in its system metadata when it
    was not yet (the caller's save writes it). A recorded one wins: a guest spawned
    again (evacuated, unshelved) keeps its chipset. ``capabilities()`` gives libvirt's
    capabilities XML, asked for only when nothing else names a type."""
    sysmeta = instance.system_metadata or {}
    recorded = sysmeta.get(SYSMETA_KEY)
    if recorded:
        return recorded
    properties = (image_meta.properties or {}) if image_meta is not None else {}
    arch = (properties.get('hw_architecture') or properties.get('architecture')
            or host_arch)
    machine_type = (properties.get('hw_machine_type') or configured_type(arch)
                    or libvirt_default(capabilities(), arch, virt_type))
    if machine_type:
        instance.system_metadata = dict(sysmeta, **{SYSMETA_KEY: machine_type})
        LOG.debug('Instance %s gets machine type %s (%s)', instance.uuid, machine_type,
                  arch)
    else:
        LOG.warning('No machine type known for architecture %s: instance %s gets the '
                    'emulator\'s default, unrecorded', arch, instance.uuid)
    return machine_type


def record_from_guests(drv: LibvirtDriver, instances: list[objects.Instance]
                       ) -> list[objects.Instance]:
    """Record, for the instances with none, the machine type their defined guest has (as
    Nova's compute does at start for guests older than the recording); the instances
    changed, for the caller to save. One without a guest here is left as it is."""
    changed = []
    for instance in instances:
        if (instance.system_metadata or {}).get(SYSMETA_KEY):
            continue
        try:
            xml = drv.host.get_guest(instance.uuid).persistent_xml()
        except exception.InstanceNotFound:
            continue
        found = ET.fromstring(xml).find('os/type')
        machine_type = found.get('machine') if found is not None else None
        if machine_type:
            instance.system_metadata = dict(instance.system_metadata or {},
                                            **{SYSMETA_KEY: machine_type})
            changed.append(instance)
    return changed


# -- the operator's side: novalite-manage libvirt ---------------------------------------

def _instance(ctxt: RequestContext, instance_uuid: str
              ) -> tuple[objects.Instance, RequestContext]:
    """The instance in its cell, and a context aimed at that cell.

    :raises InstanceMappingNotFound: no such instance
    :raises InstanceNotFound: not in a cell yet, or gone from it
    """
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, instance_uuid)
    if mapping.cell_mapping is None:
        raise exception.InstanceNotFound(instance_id=instance_uuid)
    with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
        instance = objects.Instance.get_by_uuid(cctxt, instance_uuid,
                                                expected_attrs=['system_metadata'])
    return instance, cctxt


def get_machine_type(ctxt: RequestContext, instance_uuid: str) -> str | None:
    instance, _cctxt = _instance(ctxt, instance_uuid)
    return (instance.system_metadata or {}).get(SYSMETA_KEY)


def check_supported(machine_type: str) -> None:
    if not any(re.match(p, machine_type) for p in SUPPORTED_TYPE_PATTERNS):
        raise UnsupportedMachineType(machine_type=machine_type)


def check_update(existing: str, machine_type: str) -> None:
    """No move between machine type families, nor between an alias and a versioned
    type, nor to an older version.

    :raises InvalidMachineTypeUpdate:
    """
    for pattern in SUPPORTED_TYPE_PATTERNS:
        if re.match(pattern, existing) and not re.match(pattern, machine_type):
            raise InvalidMachineTypeUpdate(existing_machine_type=existing,
                                           machine_type=machine_type)
    old = _VERSION.search(existing)
    new = _VERSION.search(machine_type)
    if old and new and (versionutils.convert_version_to_int(new.group())
                        < versionutils.convert_version_to_int(old.group())):
        raise InvalidMachineTypeUpdate(existing_machine_type=existing,
                                       machine_type=machine_type)


def update_machine_type(ctxt: RequestContext, instance_uuid: str, machine_type: str,
                        force: bool = False) -> tuple[str, str | None]:
    """Record ``machine_type`` for the instance; (new, previous).

    Without ``force``: the instance must be stopped or shelved, the type supported and
    of the recorded one's family, not older.
    """
    instance, _cctxt = _instance(ctxt, instance_uuid)
    existing = (instance.system_metadata or {}).get(SYSMETA_KEY)
    if existing == machine_type:
        return machine_type, existing
    if not force:
        if instance.vm_state not in ALLOWED_UPDATE_VM_STATES:
            raise exception.InstanceInvalidState(
                instance_uuid=instance_uuid, attr='vm_state', state=instance.vm_state,
                method='update machine type')
        check_supported(machine_type)
        if existing:
            check_update(existing, machine_type)
    instance.system_metadata = dict(instance.system_metadata or {},
                                    **{SYSMETA_KEY: machine_type})
    instance.save()
    return machine_type, existing


def _unset_in_cell(cctxt: RequestContext) -> list[str]:
    instances = objects.InstanceList.get_by_filters(cctxt, {'deleted': False},
                                                    expected_attrs=['system_metadata'])
    return [i.uuid for i in instances
            if i.vm_state != vm_states.BUILDING
            and not (i.system_metadata or {}).get(SYSMETA_KEY)]


def instances_without_type(ctxt: RequestContext, cell_uuid: str | None = None) -> list[str]:
    """The uuids of the instances (not deleted, not building) with no machine type
    recorded: in ``cell_uuid``, else in every cell but cell0.

    :raises CellMappingNotFound: ``cell_uuid`` names no cell
    """
    if cell_uuid:
        cells = [objects.CellMapping.get_by_uuid(ctxt, cell_uuid)]
    else:
        cells = [c for c in objects.CellMappingList.get_all(ctxt) if not c.is_cell0]
    found: list[str] = []
    for cell in cells:
        with nl_context.target_cell(ctxt, cell) as cctxt:
            found.extend(_unset_in_cell(cctxt))
    return found


def record_existing(drv: LibvirtDriver, host: str) -> None:
    """At the compute's start: record the machine type of this host's guests defined
    before the recording existed (as Nova's libvirt driver does in init_host). A failure
    (no conductor answering yet) is logged and left for a later start or for
    ``novalite-manage libvirt update_machine_type``."""
    ctxt = nl_context.get_admin_context()
    try:
        instances = objects.InstanceList.get_by_host(ctxt, host,
                                                     expected_attrs=['system_metadata'])
        for instance in record_from_guests(drv, list(instances)):
            instance.save()
            LOG.info('Recorded machine type %s of instance %s',
                     instance.system_metadata[SYSMETA_KEY], instance.uuid)
    except Exception as exc:
        LOG.warning('Could not record the machine types of the guests of host %s: %s',
                    host, exc)
