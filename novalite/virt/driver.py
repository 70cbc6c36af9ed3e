"""The contract between the compute manager and a hypervisor driver.

The manager calls these methods and never reaches the hypervisor otherwise. A driver
reports what the host has (``get_available_resource``, ``update_provider_tree``) and
does what it is told to instances; it never writes to the database or to Placement.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from novalite import exception, objects
from novalite.compute.provider_tree import ProviderTree
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.network.model import VIF, NetworkInfo
from novalite.virt import hardware

if TYPE_CHECKING:
    from novalite.compute.instance_events import ComputeVirtAPI

# ``callback(instance_uuid, event)`` of register_event_listener.
EventListener = Callable[[str, str], None]


# Cinder's connection info of an attachment (``driver_volume_type``, ``data`` as the
# backend sends them) plus ``serial``, the volume's id, which the compute manager adds.
# JSON from another service: its values are whatever the backend put there.
ConnectionInfo = dict[str, Any]


class VolumeMapping(TypedDict, total=False):
    """One volume of an instance, as the compute manager hands it to a driver (Nova's
    DriverVolumeBlockDevice, flattened)."""
    connection_info: ConnectionInfo
    mount_device: str | None
    boot_index: int | None
    disk_bus: str | None
    device_type: str | None
    delete_on_termination: bool
    attachment_id: str
    volume_id: str


class BlockDeviceInfo(TypedDict, total=False):
    """What the compute manager hands a driver about an instance's block devices, or
    None for an instance without volumes.

    ``block_device_mapping`` lists its attached volumes; the one with ``boot_index`` 0
    is the root disk: the instance boots from that volume, and the driver makes no disk
    from the image (``image_meta`` may still be given, for its properties). A driver
    never copies a volume's data to the host, and ``destroy`` leaves volumes alone
    (detaching them from Cinder is the manager's). ``root_device_name`` is the root's
    device (``/dev/vda``). ``ephemerals`` and ``swap`` are kept for drivers ported from
    Nova; novalite's come from the flavor.
    """
    root_device_name: str | None
    swap: dict[str, object] | None
    ephemerals: list[dict[str, object]]
    block_device_mapping: list[VolumeMapping]


class UpdateTaskState(Protocol):
    """The callback ``snapshot`` reports its progress with: sets the instance's task
    state, checking it was ``expected_state`` (by default what it was)."""

    def __call__(self, task_state: str, expected_state: str | None = None) -> None: ...


class PostMethod(Protocol):
    """What a driver's ``live_migration`` calls once the guest runs on ``dest``."""

    def __call__(self, context: RequestContext, instance: objects.Instance, dest: str,
                 block_migration: bool, migrate_data: objects.LiveMigrateData) -> None: ...


class RecoverMethod(Protocol):
    """What a driver's ``live_migration`` calls when the guest stays on the source
    (``error``: why; ``migration_status``: 'error', or 'cancelled' for an abort)."""

    def __call__(self, context: RequestContext, instance: objects.Instance, dest: str,
                 migrate_data: objects.LiveMigrateData, error: BaseException | None,
                 migration_status: str) -> None: ...


def allocation_ratio(name: str, node_value: float | None = None) -> float:
    """The configured ratio for 'cpu', 'ram' or 'disk', else the initial default."""
    value = getattr(CONF, '%s_allocation_ratio' % name)
    if value is not None:
        return value
    if node_value:
        return node_value
    return getattr(CONF, 'initial_%s_allocation_ratio' % name)


def standard_inventory(resources: dict[str, Any]) -> dict[str, dict]:
    """VCPU, MEMORY_MB and DISK_GB inventory from ``get_available_resource`` output,
    with the configured allocation ratios and reservations."""
    inventory = {
        'VCPU': {'total': resources['vcpus'], 'min_unit': 1, 'max_unit': resources['vcpus'],
                 'step_size': 1, 'reserved': CONF.reserved_host_cpus,
                 'allocation_ratio': allocation_ratio('cpu')},
        'MEMORY_MB': {'total': resources['memory_mb'], 'min_unit': 1,
                      'max_unit': resources['memory_mb'], 'step_size': 1,
                      'reserved': CONF.reserved_host_memory_mb,
                      'allocation_ratio': allocation_ratio('ram')},
    }
    if resources.get('local_gb'):
        inventory['DISK_GB'] = {
            'total': resources['local_gb'], 'min_unit': 1, 'max_unit': resources['local_gb'],
            'step_size': 1, 'reserved': math.ceil(CONF.reserved_host_disk_mb / 1024),
            'allocation_ratio': allocation_ratio('disk')}
    return inventory


@dataclasses.dataclass(frozen=True)
class ConsoleVNC:
    """Where a guest's VNC server listens, as the console proxy reaches it."""
    host: str
    port: int
    internal_access_path: str | None = None


@dataclasses.dataclass(frozen=True)
class ConsoleSerial:
    """Where a guest's serial port listens on TCP, as the serial proxy reaches it."""
    host: str
    port: int
    internal_access_path: str | None = None


class ComputeDriver:
    """Base class of hypervisor drivers.

    ``capabilities`` tells the manager what the driver can do, so the API can refuse an
    operation clearly instead of failing on the host.
    """

    capabilities: dict[str, bool] = {
        'supports_reboot': False,
        'supports_pause': False,
        'supports_suspend': False,
        'supports_console_output': False,
        'supports_attach_interface': False,
        'supports_tagged_attach_interface': False,
    }
    # Whether spawn reads the instance's Placement allocations (devices such as vGPUs
    # are picked from them). A driver that does not saves the build a Placement GET.
    spawn_uses_allocations = False

    def __init__(self, virtapi: ComputeVirtAPI | None = None) -> None:
        self.virtapi = virtapi

    def init_host(self, host: str) -> None:
        """Prepare the driver on service start: connect, check the hypervisor."""

    def cleanup_host(self, host: str) -> None:
        """Release what init_host acquired, on service stop."""

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        """Names of the hypervisor nodes this host manages (one for most drivers)."""
        raise NotImplementedError()

    def get_available_resource(self, nodename: str) -> dict[str, Any]:
        """What node ``nodename`` has and uses.

        :returns: dict with ``vcpus``, ``memory_mb``, ``local_gb``, ``vcpus_used``,
            ``memory_mb_used``, ``local_gb_used``, ``hypervisor_type``,
            ``hypervisor_version``, ``hypervisor_hostname``, ``cpu_info`` (JSON string),
            ``disk_available_least``.
        """
        raise NotImplementedError()

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str) -> None:
        """Set the node's inventory (and traits) in ``provider_tree``.

        The default reports VCPU, MEMORY_MB and DISK_GB from get_available_resource.
        """
        provider_tree.update_inventory(
            nodename, standard_inventory(self.get_available_resource(nodename)))

    def list_instance_uuids(self) -> list[str]:
        """UUIDs of the instances the hypervisor has."""
        raise NotImplementedError()

    def instance_exists(self, instance: objects.Instance) -> bool:
        return instance.uuid in self.list_instance_uuids()

    def spawn(self, context: RequestContext, instance: objects.Instance,
              image_meta: objects.ImageMeta | None, injected_files: list,
              admin_password: str | None, allocations: dict,
              network_info: NetworkInfo | None = None,
              block_device_info: BlockDeviceInfo | None = None) -> None:
        """Create and start the guest; return once it runs.

        :param allocations: the instance's Placement allocations (provider → resources)
        :raises: ``exception.NovaliteException`` subclasses; any failure lets the manager
            reschedule the build to an alternate host.
        """
        raise NotImplementedError()

    def destroy(self, context: RequestContext, instance: objects.Instance,
                network_info: NetworkInfo | None = None,
                block_device_info: BlockDeviceInfo | None = None,
                destroy_disks: bool = True) -> None:
        """Stop the guest and remove it and its disks. Must succeed when the guest is
        already gone."""
        raise NotImplementedError()

    def get_info(self, instance: objects.Instance) -> hardware.InstanceInfo:
        """Power state of the guest; ``InstanceNotFound`` when the hypervisor lacks it."""
        raise NotImplementedError()

    def register_event_listener(self, callback: EventListener) -> None:
        """Call ``callback(instance_uuid, event)`` when a guest changes state on its own
        (drivers without lifecycle events ignore it)."""

    def reboot(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None = None, reboot_type: str = 'SOFT',
               block_device_info: BlockDeviceInfo | None = None) -> None:
        """SOFT: a clean restart, falling back to HARD; HARD: power cycle."""
        raise NotImplementedError()

    def power_off(self, instance: objects.Instance, timeout: int = 0,
                  retry_interval: int = 0) -> None:
        """Stop the guest, cleanly within ``timeout`` seconds when it is > 0."""
        raise NotImplementedError()

    def power_on(self, context: RequestContext, instance: objects.Instance,
                 network_info: NetworkInfo | None = None,
                 block_device_info: BlockDeviceInfo | None = None) -> None:
        raise NotImplementedError()

    def pause(self, instance: objects.Instance) -> None:
        raise NotImplementedError()

    def unpause(self, instance: objects.Instance) -> None:
        raise NotImplementedError()

    def suspend(self, context: RequestContext, instance: objects.Instance) -> None:
        raise NotImplementedError()

    def resume(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None = None,
               block_device_info: BlockDeviceInfo | None = None) -> None:
        raise NotImplementedError()

    def get_console_output(self, context: RequestContext, instance: objects.Instance) -> str:
        """The guest's console log (the API shows a tail of it).

        :raises NotImplementedError: the driver keeps no console log (the API answers 501)
        """
        raise NotImplementedError()

    def get_vnc_console(self, context: RequestContext, instance: objects.Instance
                        ) -> ConsoleVNC:
        """The guest's VNC server.

        :raises ConsoleTypeUnavailable: VNC is off (``[vnc] enabled``) or the driver has none
        :raises InstanceNotFound: the guest is gone
        """
        raise exception.ConsoleTypeUnavailable(console_type='novnc')

    def get_serial_console(self, context: RequestContext, instance: objects.Instance
                           ) -> ConsoleSerial:
        """The guest's serial port on TCP.

        :raises ConsoleTypeUnavailable: serial consoles are off or the driver has none
        :raises ConsoleNotAvailable: the guest has no serial port on TCP
        """
        raise exception.ConsoleTypeUnavailable(console_type='serial')

    def get_host_uptime(self) -> str:
        """The hypervisor host's uptime and load, as the ``uptime`` command prints them.

        :raises NotImplementedError: the driver cannot tell (the API answers 501)
        """
        raise NotImplementedError()

    def host_power_action(self, action: str) -> str:
        """Reboot, shut down or start the hypervisor host.

        :param action: ``startup``, ``shutdown`` or ``reboot``
        :returns: the result of the action
        :raises NotImplementedError: the driver cannot (the API answers 501)
        """
        raise NotImplementedError()

    def host_maintenance_mode(self, host: str, mode: bool) -> str:
        """Put the host in maintenance (``mode`` True) or take it out.

        :returns: ``on_maintenance`` or ``off_maintenance``
        :raises NotImplementedError: the driver has no such mode (the API answers 501)
        """
        raise NotImplementedError()

    def set_host_enabled(self, enabled: bool) -> str:
        """Let the host take new instances, or not.

        :returns: ``enabled`` or ``disabled``
        :raises NotImplementedError: the driver has nothing to do for it (the compute
            manager then answers as asked)
        """
        raise NotImplementedError()

    def get_instance_diagnostics(self, instance: objects.Instance) -> dict[str, Any]:
        """Diagnostics of a running guest in the standard format (API 2.48).

        :returns: a dict made with ``novalite.virt.diagnostics.new``
        :raises NotImplementedError: the driver cannot tell (the API answers 501)
        """
        raise NotImplementedError()

    def get_diagnostics(self, instance: objects.Instance) -> dict[str, Any]:
        """Free-form diagnostics (API before 2.48); by default the standard ones,
        flattened the way Nova's libvirt driver named them."""
        from novalite.virt import diagnostics
        return diagnostics.legacy(self.get_instance_diagnostics(instance))

    def cache_image(self, context: RequestContext, image_id: str) -> bool:
        """Download an image into this host's image cache, as a spawn would, so that
        later spawns find it there.

        :returns: True if it was downloaded now, False if it was cached already
        :raises NotImplementedError: the driver keeps no image cache
        """
        raise NotImplementedError()

    def snapshot(self, context: RequestContext, instance: objects.Instance, image_id: str,
                 update_task_state: UpdateTaskState) -> None:
        """Upload the instance's root disk as the data of the queued Glance image
        ``image_id`` (createImage, createBackup, shelve).

        :param update_task_state: ``update_task_state(task_state, expected_state)``;
            the driver calls it with ``IMAGE_PENDING_UPLOAD`` once the disk is being
            captured and ``IMAGE_UPLOADING`` when the upload starts (the shelving
            variants when shelving), as Nova's drivers do.
        :raises: ``exception.NovaliteException`` subclasses; the caller deletes the
            image and restores the instance's state.
        """
        raise NotImplementedError()


    # -- resize and migrations --------------------------------------------------------

    def migrate_disk_and_power_off(self, context: RequestContext, instance: objects.Instance,
                                   dest: str, flavor: objects.Flavor,
                                   network_info: NetworkInfo | None = None,
                                   block_device_info: BlockDeviceInfo | None = None,
                                   timeout: int = 0, retry_interval: int = 0) -> dict:
        """On the source of a resize or cold migration: stop the guest (cleanly within
        ``timeout`` seconds) and set its disks aside for the destination.

        :param dest: the destination host
        :param flavor: the new flavor
        :returns: what ``finish_migration`` on the destination needs (disk_info)
        :raises CannotResizeDisk: the new flavor's disk is smaller (nothing changed)
        """
        raise NotImplementedError()

    def finish_migration(self, context: RequestContext, migration: objects.Migration,
                         instance: objects.Instance, disk_info: dict, network_info: NetworkInfo,
                         image_meta: objects.ImageMeta | None, resize_instance: bool,
                         allocations: dict, block_device_info: BlockDeviceInfo | None = None,
                         power_on: bool = True) -> None:
        """On the destination: make the guest from ``disk_info`` with the instance's
        (new) flavor, and start it when ``power_on``."""
        raise NotImplementedError()

    def confirm_migration(self, context: RequestContext, migration: objects.Migration,
                          instance: objects.Instance,
                          network_info: NetworkInfo | None = None) -> None:
        """On the source, once the resize is confirmed: remove what was set aside
        (and the old guest, if the destination is another host)."""
        raise NotImplementedError()

    def finish_revert_migration(self, context: RequestContext, instance: objects.Instance,
                                network_info: NetworkInfo, migration: objects.Migration,
                                block_device_info: BlockDeviceInfo | None = None,
                                power_on: bool = True) -> None:
        """On the source, when the resize is reverted: bring back the old guest and
        disks, started when ``power_on``."""
        raise NotImplementedError()

    # -- live migration (the conversation in compute/live_migration*.py) ---------------

    def check_can_live_migrate_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           block_migration: bool | None,
                                           migrate_data: objects.LiveMigrateData
                                           ) -> objects.LiveMigrateData:
        """On the destination, first: whether it can take ``instance`` live. Fill in
        what the source needs (``target_connect_addr``, ``dest_host``,
        ``is_shared_instance_path``, ``driver_data``) and return ``migrate_data``.

        :param block_migration: True/False as asked, None for "auto" (the source's
            check decides)
        :raises MigrationPreCheckError: it cannot (the default: no live migration)
        """
        raise exception.MigrationPreCheckError(
            reason='the %s driver cannot live-migrate instances' % type(self).__name__)

    def check_can_live_migrate_source(self, context: RequestContext,
                                      instance: objects.Instance,
                                      migrate_data: objects.LiveMigrateData
                                      ) -> objects.LiveMigrateData:
        """On the source, after the destination's check: whether this guest can go
        there; settle ``block_migration`` (None: True unless storage is shared).

        :raises MigrationPreCheckError: it cannot
        """
        raise exception.MigrationPreCheckError(
            reason='the %s driver cannot live-migrate instances' % type(self).__name__)

    def pre_live_migration(self, context: RequestContext, instance: objects.Instance,
                           network_info: NetworkInfo,
                           block_device_info: BlockDeviceInfo | None,
                           migrate_data: objects.LiveMigrateData
                           ) -> objects.LiveMigrateData:
        """On the destination, before the source starts: make the instance's folder
        and disks when not shared, plug ``network_info`` (the ports as bound here),
        connect the volumes of ``block_device_info`` (their new attachments).

        :raises MigrationError: the destination cannot be made ready (what was made is
            removed by ``rollback_live_migration_at_destination``)
        """
        raise NotImplementedError()

    def live_migration(self, context: RequestContext, instance: objects.Instance, dest: str,
                       post_method: PostMethod, recover_method: RecoverMethod,
                       block_migration: bool,
                       migrate_data: objects.LiveMigrateData) -> None:
        """On the source: move the running guest to ``dest`` and return once it is
        over, having called ``post_method`` (the guest runs on ``dest``) or
        ``recover_method`` (it still runs here: failed, aborted or timed out) exactly
        once. While it runs, the progress goes in ``migrate_data.migration``'s
        ``memory_*``/``disk_*`` counters (saved).
        """
        raise NotImplementedError()

    def live_migration_abort(self, instance: objects.Instance) -> None:
        """On the source: end the running migration of ``instance``; its
        ``live_migration`` then calls ``recover_method``.

        :raises NotImplementedError: the driver cannot
        :raises MigrationError: there is no migration to abort
        """
        raise NotImplementedError()

    def live_migration_force_complete(self, instance: objects.Instance) -> None:
        """On the source: make the running migration of ``instance`` converge now
        (pause the guest: the rest of its memory is copied while it does not run).

        :raises NotImplementedError: the driver cannot
        """
        raise NotImplementedError()

    def post_live_migration_at_source(self, context: RequestContext,
                                      instance: objects.Instance, network_info: NetworkInfo,
                                      block_device_info: BlockDeviceInfo | None,
                                      migrate_data: objects.LiveMigrateData) -> None:
        """On the source, once the guest runs on the destination: disconnect the
        volumes, unplug ``network_info``, remove what is left of the guest here (its
        disks unless ``is_shared_instance_path``)."""
        raise NotImplementedError()

    def post_live_migration_at_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           network_info: NetworkInfo,
                                           block_migration: bool,
                                           block_device_info: BlockDeviceInfo | None
                                           ) -> None:
        """On the destination, once the guest runs here: keep it (a persistent
        definition, the driver's own records)."""
        raise NotImplementedError()

    def rollback_live_migration_at_destination(self, context: RequestContext,
                                               instance: objects.Instance,
                                               network_info: NetworkInfo,
                                               block_device_info: BlockDeviceInfo | None,
                                               destroy_disks: bool,
                                               migrate_data: objects.LiveMigrateData
                                               ) -> None:
        """On the destination of a migration that failed: remove what
        ``pre_live_migration`` made (a guest that came half-way, the VIFs, the
        volumes' connections, the disks when ``destroy_disks``). Idempotent."""
        raise NotImplementedError()

    # -- network interfaces ---------------------------------------------------------------

    def attach_interface(self, context: RequestContext, instance: objects.Instance,
                         image_meta: objects.ImageMeta | None, vif: VIF) -> None:
        """Plug ``vif`` (a VIF of ``novalite.network.model``, its port already bound to
        this host) and add its NIC to the guest: live when the guest runs, and to its
        definition either way. Drivers that can say so in ``capabilities``
        (``supports_attach_interface``).

        :raises NotImplementedError: the driver cannot.
        :raises NovaliteException: the NIC could not be added (nothing is left plugged).
        """
        raise NotImplementedError()

    def detach_interface(self, context: RequestContext, instance: objects.Instance,
                         vif: VIF) -> None:
        """Remove the NIC of ``vif`` from the guest (live and from its definition) and
        unplug it; a NIC the guest no longer has is not an error.

        :raises NotImplementedError: the driver cannot.
        :raises NovaliteException: the NIC could not be removed.
        """
        raise NotImplementedError()

    # -- volumes ----------------------------------------------------------------------------

    def get_volume_connector(self, instance: objects.Instance) -> dict[str, Any]:
        """What this host tells Cinder to get a volume's connection info (os-brick's
        connector properties): at least ``host``, ``ip``, ``platform``, ``os_type`` and
        ``multipath``.

        :raises NotImplementedError: the driver attaches no volumes
        """
        raise NotImplementedError()

    def attach_volume(self, context: RequestContext, connection_info: ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      disk_bus: str | None = None, device_type: str | None = None,
                      encryption: dict[str, Any] | None = None) -> None:
        """Add the volume as a disk at ``mountpoint`` (``/dev/vdb``): to the running
        guest and to its definition, or to the definition only when it is stopped.

        :raises VolumeAttachFailed: the hypervisor refused it or cannot open this kind
            of volume; the guest has no new disk
        :raises NotImplementedError: the driver attaches no volumes
        """
        raise NotImplementedError()

    def detach_volume(self, context: RequestContext, connection_info: ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      encryption: dict[str, Any] | None = None) -> None:
        """Remove the volume's disk from the guest and its definition. A disk the guest
        no longer has, or a guest that is gone, counts as detached.

        :raises DeviceDetachFailed: the running guest did not release the disk in time
        :raises NotImplementedError: the driver attaches no volumes
        """
        raise NotImplementedError()

    def swap_volume(self, context: RequestContext, old_connection_info: ConnectionInfo,
                    new_connection_info: ConnectionInfo, instance: objects.Instance,
                    mountpoint: str, resize_to: int) -> None:
        """Replace the disk at ``mountpoint`` by the new volume, its data copied while
        the guest runs (Cinder's volume migration and retype).

        :param resize_to: the new volume's size in GiB if bigger, else 0
        :raises NotImplementedError: the driver cannot swap volumes
        """
        raise NotImplementedError()

    # -- in-place actions (rescue, password, crash dump, soft delete) --------------------

    def rescue(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None, image_meta: objects.ImageMeta,
               rescue_password: str | None,
               block_device_info: BlockDeviceInfo | None = None) -> None:
        """Boot the instance from ``image_meta`` with its own root disk attached second,
        keeping what is needed to boot it normally again (``unrescue``).

        :param rescue_password: for drivers that can inject it (may be ignored)
        """
        raise NotImplementedError()

    def unrescue(self, context: RequestContext, instance: objects.Instance) -> None:
        """Boot the instance from its own disk again, dropping the rescue disk."""
        raise NotImplementedError()

    def set_admin_password(self, instance: objects.Instance, new_pass: str) -> None:
        """Set the guest's administrator password.

        :raises InstanceAgentNotEnabled: the guest has no agent to do it
        :raises SetAdminPasswdNotSupported: the hypervisor cannot do it
        """
        raise NotImplementedError()

    def trigger_crash_dump(self, instance: objects.Instance) -> None:
        """Make the guest dump its kernel (an NMI); whether it does is the guest's
        configuration.

        :raises TriggerCrashDumpNotSupported: the hypervisor cannot send one
        """
        raise NotImplementedError()

    def soft_delete(self, instance: objects.Instance) -> None:
        """Keep a deleted instance restorable (the manager powers it off when the
        driver does not implement this)."""
        raise NotImplementedError()

    def restore(self, instance: objects.Instance) -> None:
        """Undo ``soft_delete`` (the manager powers it on when the driver does not
        implement this)."""
        raise NotImplementedError()


def load_compute_driver(virtapi: ComputeVirtAPI | None = None,
                        name: str | None = None) -> ComputeDriver:
    """The driver named by ``[DEFAULT] compute_driver`` (an entry point name)."""
    from stevedore import driver as sv_driver
    name = name or CONF.compute_driver
    try:
        manager: sv_driver.DriverManager[ComputeDriver] = sv_driver.DriverManager(
            'novalite.compute.drivers', name, invoke_on_load=True, invoke_args=(virtapi,))
    except Exception as exc:
        raise exception.VirtDriverNotFound(name=name) from exc
    # Invoked on load, the plug-in is the driver itself, not its factory.
    return cast(ComputeDriver, manager.driver)
