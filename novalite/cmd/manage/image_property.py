"""``novalite-manage image_property``: the image properties an instance keeps, as
nova-manage's.

A server keeps the properties of the image it was built from in its system metadata
(``image_<property>``); its guest is defined from them (and the scheduler reads them
from its request spec when it moves). ``set`` changes them for a stopped or shelved
server, e.g. a disk bus its image got wrong, without a rebuild.
"""
from __future__ import annotations

from collections.abc import Callable

from oslo_utils import strutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.cmd.manage.common import NOT_FOUND, args, exit_code
from novalite.compute import vm_states

ALLOWED_VM_STATES = (vm_states.STOPPED, vm_states.SHELVED, vm_states.SHELVED_OFFLOADED)


def _boolean(value: str) -> None:
    strutils.bool_from_string(value, strict=True)


def _integer(value: str) -> None:
    int(value)


def _one_of(*choices: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError('%r is not one of %s' % (value, ', '.join(choices)))
    return check


def _text(value: str) -> None:
    """Any string."""


_DISK_BUS = _one_of('fdc', 'ide', 'sata', 'scsi', 'usb', 'virtio', 'xen', 'lxc', 'uml')
_VIF_MODELS = _one_of('virtio', 'e1000', 'e1000e', 'ne2k_pci', 'pcnet', 'rtl8139',
                      'igb', 'vmxnet3')
# The image properties Nova's ImageMetaProps knows (the names novalite reads among
# them), each with what checks a value.
KNOWN_PROPERTIES: dict[str, Callable[[str], None]] = {
    'hw_architecture': _one_of('x86_64', 'i686', 'aarch64', 'armv7l', 'ppc64le', 's390x'),
    'hw_auto_disk_config': _text, 'hw_boot_menu': _boolean,
    'hw_cdrom_bus': _DISK_BUS, 'hw_disk_bus': _DISK_BUS, 'hw_floppy_bus': _DISK_BUS,
    'hw_rescue_bus': _DISK_BUS, 'hw_rescue_device': _one_of('cdrom', 'disk', 'floppy'),
    'hw_cpu_cores': _integer, 'hw_cpu_sockets': _integer, 'hw_cpu_threads': _integer,
    'hw_cpu_max_cores': _integer, 'hw_cpu_max_sockets': _integer,
    'hw_cpu_max_threads': _integer,
    'hw_cpu_policy': _one_of('shared', 'dedicated', 'mixed'),
    'hw_cpu_thread_policy': _one_of('prefer', 'isolate', 'require'),
    'hw_cpu_realtime_mask': _text, 'hw_device_id': _integer, 'hw_disk_type': _text,
    'hw_emulation_architecture': _text, 'hw_ephemeral_encryption': _boolean,
    'hw_ephemeral_encryption_format': _one_of('luks'),
    'hw_firmware_type': _one_of('bios', 'uefi'), 'hw_firmware_stateless': _boolean,
    'hw_input_bus': _one_of('usb', 'virtio'), 'hw_ipxe_boot': _boolean,
    'hw_locked_memory': _boolean, 'hw_machine_type': _text,
    'hw_maxphysaddr_mode': _one_of('passthrough', 'emulate'),
    'hw_maxphysaddr_bits': _integer, 'hw_mem_encryption': _boolean,
    'hw_mem_encryption_model': _one_of('amd-sev', 'amd-sev-es'),
    'hw_mem_page_size': _text, 'hw_numa_nodes': _integer,
    'hw_pci_numa_affinity_policy': _one_of('required', 'preferred', 'legacy', 'socket'),
    'hw_pmu': _boolean, 'hw_pointer_model': _one_of('usbtablet'),
    'hw_qemu_guest_agent': _boolean, 'hw_rng_model': _text, 'hw_scsi_model': _text,
    'hw_serial_port_count': _integer, 'hw_sound_model': _text, 'hw_time_hpet': _boolean,
    'hw_tpm_model': _one_of('tpm-tis', 'tpm-crb'), 'hw_tpm_version': _one_of('1.2', '2.0'),
    'hw_usb_model': _text, 'hw_redirected_usb_ports': _integer,
    'hw_video_model': _one_of('vga', 'cirrus', 'vmvga', 'xen', 'qxl', 'virtio', 'gop',
                              'none', 'bochs'),
    'hw_video_ram': _integer, 'hw_vif_model': _VIF_MODELS,
    'hw_vif_multiqueue_enabled': _boolean, 'hw_viommu_model': _text,
    'hw_virtio_packed_ring': _boolean, 'hw_vm_mode': _one_of('hvm', 'xen', 'uml', 'exe'),
    'hw_watchdog_action': _one_of('disabled', 'pause', 'poweroff', 'reset', 'none'),
    'img_bdm_v2': _boolean, 'img_cache_in_nova': _boolean,
    'img_compression_level': _integer, 'img_config_drive': _one_of('optional', 'mandatory'),
    'img_hv_requested_version': _text, 'img_hv_type': _text, 'img_linked_clone': _boolean,
    'img_root_device_name': _text, 'img_use_agent': _boolean, 'img_version': _integer,
    'os_admin_user': _text, 'os_command_line': _text, 'os_distro': _text,
    'os_require_quiesce': _boolean, 'os_secure_boot': _one_of('required', 'disabled',
                                                              'optional'),
    'os_skip_agent_inject_files_at_boot': _boolean, 'os_skip_agent_inject_ssh': _boolean,
    'os_type': _text,
}


class InvalidImagePropertyName(exception.Invalid):
    msg_fmt = 'Invalid image property name %(image_property_name)s.'


def validate(properties: list[str]) -> dict[str, str]:
    """``name=value`` strings as a dict, each name known and its value valid.

    :raises InvalidInput: not ``name=value``
    :raises InvalidImagePropertyName: a name no image property has
    :raises ValueError: a value the property does not take
    """
    if not properties or any('=' not in p for p in properties):
        raise exception.InvalidInput(reason='--property should use the format key=value')
    parsed = dict(p.split('=', 1) for p in properties)
    for name in parsed:
        if name not in KNOWN_PROPERTIES:
            raise InvalidImagePropertyName(image_property_name=name)
    for name, value in parsed.items():
        try:
            KNOWN_PROPERTIES[name](value)
        except ValueError as exc:
            raise ValueError('Invalid value for image property %s: %s' % (name, exc)) \
                from exc
    return parsed


def _instance(ctxt: nl_context.RequestContext, instance_uuid: str) -> objects.Instance:
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, instance_uuid)
    if mapping.cell_mapping is None:
        raise exception.InstanceNotFound(instance_id=instance_uuid)
    with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
        return objects.Instance.get_by_uuid(cctxt, instance_uuid,
                                            expected_attrs=['system_metadata'])


def _update(ctxt: nl_context.RequestContext, instance: objects.Instance,
            properties: list[str]) -> None:
    if instance.vm_state not in ALLOWED_VM_STATES:
        raise exception.InstanceInvalidState(
            instance_uuid=instance.uuid, attr='vm_state', state=instance.vm_state,
            method='image_property set (must be STOPPED, SHELVED, OR SHELVED_OFFLOADED)')
    values = validate(properties)
    spec = objects.RequestSpec.get_by_instance_uuid(ctxt, instance.uuid)
    instance.system_metadata = dict(instance.system_metadata or {},
                                    **{'image_%s' % k: v for k, v in values.items()})
    instance.save()
    # The scheduler reads the image from the request spec when the server moves.
    if spec.obj_attr_is_set('image') and spec.image is not None:
        image = spec.image
        image.properties = dict(image.properties or {}, **values)
        spec.image = image
        spec.save()


class ImagePropertyCommands:
    """The image properties an instance keeps in its system metadata."""

    @args('instance_uuid', metavar='<instance_uuid>', help='UUID of the instance')
    @args('image_property', metavar='<image_property>', help='Image property to show')
    def show(self, instance_uuid: str, image_property: str) -> int:
        """Show the value of an image property of an instance. Exit 0: shown,
        1: unexpected error, 2: no such instance, 3: the instance has no such property."""
        try:
            instance = _instance(nl_context.get_admin_context(), instance_uuid)
        except Exception as exc:
            return exit_code(exc, [(NOT_FOUND, 2)])
        value = (instance.system_metadata or {}).get('image_%s' % image_property)
        if not value:
            print('Image property %s not found for instance %s.'
                  % (image_property, instance_uuid))
            return 3
        print(value)
        return 0

    @args('instance_uuid', metavar='<instance_uuid>', help='UUID of the instance')
    @args('--property', metavar='<image_property>', action='append',
          dest='image_properties',
          help='Image property to set, as name=value (repeat it for several: '
               '--property hw_disk_bus=virtio --property hw_cdrom_bus=sata)')
    def set(self, instance_uuid: str, image_properties: list[str] | None = None) -> int:
        """Set image properties of a STOPPED, SHELVED or SHELVED_OFFLOADED instance (its
        guest gets them when it is next defined). Exit 0: set, 1: unexpected error,
        2: no such instance, 3: wrong vm_state, 4: not name=value, 5: unknown property,
        6: invalid value."""
        ctxt = nl_context.get_admin_context()
        try:
            _update(ctxt, _instance(ctxt, instance_uuid), image_properties or [])
        except Exception as exc:
            return exit_code(exc, [(ValueError, 6), (InvalidImagePropertyName, 5),
                                   (exception.InvalidInput, 4),
                                   (exception.InstanceInvalidState, 3), (NOT_FOUND, 2)])
        return 0
