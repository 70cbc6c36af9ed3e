"""Resize and cold migration on the compute hosts (Nova's prep_resize, resize_instance,
finish_resize, confirm_resize, revert_resize and finish_revert_resize).

The conductor has moved the instance's allocation on the source to the migration and
claimed the destination for the instance. Then: the destination claims
(``prep_resize``), the source stops the guest and sets its disks aside
(``resize_instance``), the destination makes the guest with the new flavor
(``finish_resize``): VERIFY_RESIZE. Confirm frees the source; revert removes the new
guest and gives the source's allocation back to the instance.

A step that fails undoes the move: the migration ends in ``error``, the allocation goes
back to the instance on the source, the instance goes back to its state with a fault.
Each step runs under the instance lock, in ``operation.operation`` (event,
notifications, fault).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, notifications, objects
from novalite.compute import (
    block_devices,
    consoles,
    ports,
    task_states,
    vm_states,
    volume_moves,
)
from novalite.compute import rpcapi as compute_rpcapi
from novalite.compute.operation import operation
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

PREP_EVENT = 'compute_prep_resize'
RESIZE_EVENT = 'compute_resize_instance'
FINISH_EVENT = 'compute_finish_resize'
CONFIRM_EVENT = 'compute_confirm_resize'
REVERT_EVENT = 'compute_revert_resize'
FINISH_REVERT_EVENT = 'compute_finish_revert_resize'
OLD_VM_STATE = 'old_vm_state'


def _rpcapi() -> compute_rpcapi.ComputeAPI:
    return compute_rpcapi.ComputeAPI()


def apply_flavor(instance: objects.Instance, flavor: objects.Flavor) -> None:
    """Make ``flavor`` the instance's flavor, with the columns quota counts."""
    instance.flavor = flavor
    instance.instance_type_id = flavor.id
    instance.memory_mb = flavor.memory_mb
    instance.vcpus = flavor.vcpus
    instance.root_gb = flavor.root_gb
    instance.ephemeral_gb = flavor.ephemeral_gb


def _old_vm_state(instance: objects.Instance) -> str:
    return (instance.system_metadata or {}).get(OLD_VM_STATE) or vm_states.ACTIVE


def _save_migration(migration: objects.Migration, status: str) -> None:
    migration.status = status
    migration.save()


def undo_move(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
              migration: objects.Migration) -> None:
    """After a failed step: migration in error, the source's allocation back to the
    instance, the instance back on the source with its old flavor. Best effort: each
    part is tried even if another fails."""
    try:
        _save_migration(migration, 'error')
    except Exception:
        LOG.exception('Could not mark migration %s in error', migration.uuid)
    try:
        mgr.reportclient.move_allocations(context, migration.uuid, instance.uuid,
                                          target_type='INSTANCE')
    except Exception:
        LOG.exception('Could not give the allocation of migration %s back to %s',
                      migration.uuid, instance.uuid)
    old = instance.old_flavor if instance.obj_attr_is_set('old_flavor') else None
    if old is not None and instance.flavor.id != old.id:
        apply_flavor(instance, old)
    instance.old_flavor = None
    instance.new_flavor = None
    instance.host = migration.source_compute
    instance.node = migration.source_node
    instance.system_metadata = {k: v for k, v in (instance.system_metadata or {}).items()
                                if k != OLD_VM_STATE}


# -- destination: claim ----------------------------------------------------------------

def prep_resize(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                flavor: objects.Flavor, migration: objects.Migration, node: str,
                clean_shutdown: bool) -> None:
    with operation(mgr, context, instance, PREP_EVENT, instance.vm_state, 'resize_prep'):
        try:
            mgr.rt.move_claim(context, instance, flavor, migration, node)
            migration.dest_compute = mgr.host
            migration.dest_node = node
            migration.dest_host = CONF.my_ip
            migration.save()
            instance.old_flavor = instance.flavor
            instance.new_flavor = flavor
            instance.system_metadata = dict(instance.system_metadata or {},
                                            **{OLD_VM_STATE: instance.vm_state})
            instance.save(expected_task_state=task_states.RESIZE_PREP)
            _rpcapi().resize_instance(context, instance, migration, flavor, clean_shutdown)
        except Exception:
            mgr.rt.drop_move_claim(context, migration.uuid)
            undo_move(mgr, context, instance, migration)
            raise
    LOG.info('Resize of %s claimed on %s', instance.uuid, mgr.host)


# -- source: stop and hand over ----------------------------------------------------------

def resize_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    migration: objects.Migration, flavor: objects.Flavor,
                    clean_shutdown: bool) -> None:
    old_vm_state = _old_vm_state(instance)
    with operation(mgr, context, instance, RESIZE_EVENT, instance.vm_state, 'resize'):
        disk_info = None
        released: list[objects.BlockDeviceMapping] = []
        try:
            _save_migration(migration, 'migrating')
            instance.task_state = task_states.RESIZE_MIGRATING
            instance.save(expected_task_state=task_states.RESIZE_PREP)
            timeout = CONF.shutdown_timeout if clean_shutdown else 0
            assert migration.dest_compute is not None, 'prep_resize records the destination'
            disk_info = mgr.driver.migrate_disk_and_power_off(
                context, instance, migration.dest_compute, flavor, timeout=timeout)
            _save_migration(migration, 'post-migrating')
            instance.host = migration.dest_compute
            instance.node = migration.dest_node
            instance.task_state = task_states.RESIZE_MIGRATED
            instance.save(expected_task_state=task_states.RESIZE_MIGRATING)
            # The volumes stay the server's, reserved for the destination to connect.
            released = volume_moves.release_host(mgr, context, instance)
            _rpcapi().finish_resize(context, instance, migration, disk_info)
        except Exception:
            undo_move(mgr, context, instance, migration)
            if disk_info is not None:
                # The disks were set aside: put them back and start the guest again.
                _restore_source_guest(mgr, context, instance, migration, old_vm_state,
                                      released)
            raise


def _restore_source_guest(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                          migration: objects.Migration, old_vm_state: str,
                          released: list[objects.BlockDeviceMapping]) -> None:
    try:
        bdi = volume_moves.connect_here(mgr, context, instance, released) if released \
            else None
        mgr.driver.finish_revert_migration(context, instance,
                                           instance.info_cache.network_info, migration,
                                           block_device_info=bdi,
                                           power_on=old_vm_state != vm_states.STOPPED)
    except Exception:
        LOG.exception('Could not restore the guest of %s on %s', instance.uuid, mgr.host)


# -- destination: make the new guest -----------------------------------------------------

def finish_resize(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  migration: objects.Migration, disk_info: dict) -> None:
    """On failure the instance ends in ERROR (as in Nova): its disks may be half
    copied; the source's allocation is freed, the destination's stays with it."""
    old_vm_state = _old_vm_state(instance)
    with operation(mgr, context, instance, FINISH_EVENT, vm_states.ERROR, 'resize_finish'):
        try:
            old, new = instance.flavor, instance.new_flavor
            assert new is not None, 'prep_resize records the new flavor'
            instance.task_state = task_states.RESIZE_FINISH
            apply_flavor(instance, new)
            instance.save(expected_task_state=task_states.RESIZE_MIGRATED)
            allocations = mgr.reportclient.get_allocations_for_consumer(context,
                                                                        instance.uuid)
            network_info = ports.move_ports(mgr, context, instance, mgr.host)
            bdi = volume_moves.connect_here(mgr, context, instance)
            mgr.driver.finish_migration(
                context, migration, instance, disk_info, network_info, None,
                resize_instance=old.id != new.id, allocations=allocations,
                block_device_info=bdi, power_on=old_vm_state != vm_states.STOPPED)
            consoles.clean_tokens(context, instance.uuid)  # they name the old host
            _save_migration(migration, 'finished')
            instance.power_state = mgr.driver.get_info(instance).state
            instance.vm_state = vm_states.RESIZED
            instance.task_state = None
            instance.save(expected_task_state=task_states.RESIZE_FINISH)
        except Exception:
            _fail_finish(mgr, context, instance, migration)
            raise
    LOG.info('Instance %s resized on %s; waiting for confirm or revert', instance.uuid,
             mgr.host)


def _fail_finish(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 migration: objects.Migration) -> None:
    # Each step on its own: a migration that cannot be saved now must not keep the
    # source's allocation held under it.
    try:
        _save_migration(migration, 'error')
    except Exception:
        LOG.exception('Could not mark migration %s as failed', migration.uuid)
    try:
        mgr.reportclient.delete_allocation_for_instance(context, migration.uuid)
    except Exception:
        LOG.exception("Could not free the source's allocation of migration %s",
                      migration.uuid)


# -- confirm (source) --------------------------------------------------------------------

def confirm_resize(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                   migration: objects.Migration) -> None:
    """Remove the old guest and disks, free the source's allocation."""
    with operation(mgr, context, instance, CONFIRM_EVENT, instance.vm_state,
                   'resize_confirm'):
        mgr.driver.confirm_migration(context, migration, instance)
        mgr.reportclient.delete_allocation_for_instance(context, migration.uuid)
        mgr.rt.drop_move_claim(context, migration.uuid)
        _save_migration(migration, 'confirmed')
        stopped = _old_vm_state(instance) == vm_states.STOPPED
        instance.old_flavor = None
        instance.new_flavor = None
        instance.system_metadata = {k: v for k, v in (instance.system_metadata or {}).items()
                                    if k != OLD_VM_STATE}
        instance.vm_state = vm_states.STOPPED if stopped else vm_states.ACTIVE
        instance.task_state = None
        try:
            instance.save(expected_task_state=[None, task_states.RESIZE_CONFIRMING])
        except exception.UnexpectedTaskStateError as exc:
            if 'deleting' not in str(exc):
                raise
            # Confirmed because the server is being deleted: the delete ends it.
            LOG.info('Resize of %s confirmed; the server is being deleted', instance.uuid)
            return
    LOG.info('Resize of %s confirmed', instance.uuid)


# -- revert (destination, then source) ---------------------------------------------------

def revert_resize(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  migration: objects.Migration) -> None:
    """Remove the new guest here, then let the source bring the old one back."""
    notifications.notify_about_instance_action(context, instance, mgr.host,
                                               'resize_revert', notifications.START)
    with operation(mgr, context, instance, REVERT_EVENT, vm_states.ERROR):
        bdms = volume_moves.instance_volumes(context, instance)
        mgr.driver.destroy(context, instance, destroy_disks=True,
                           block_device_info=block_devices.block_device_info(bdms))
        consoles.clean_tokens(context, instance.uuid)
        volume_moves.release_host(mgr, context, instance, bdms)
        mgr.rt.drop_move_claim(context, migration.uuid)
        if migration.source_compute != mgr.host:
            mgr.rt.drop_move_claim(context, instance.uuid)
        _save_migration(migration, 'reverted')
        _rpcapi().finish_revert_resize(context, instance, migration)


def finish_revert_resize(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                         migration: objects.Migration) -> None:
    """The old flavor, host, allocation and guest back, in the state it had."""
    old_vm_state = _old_vm_state(instance)
    with operation(mgr, context, instance, FINISH_REVERT_EVENT, vm_states.ERROR):
        assert instance.old_flavor is not None, 'prep_resize records the old flavor'
        apply_flavor(instance, instance.old_flavor)
        instance.old_flavor = None
        instance.new_flavor = None
        instance.host = migration.source_compute
        instance.node = migration.source_node
        instance.system_metadata = {k: v for k, v in (instance.system_metadata or {}).items()
                                    if k != OLD_VM_STATE}
        instance.save(expected_task_state=task_states.RESIZE_REVERTING)
        mgr.reportclient.move_allocations(context, migration.uuid, instance.uuid,
                                          target_type='INSTANCE')
        network_info = ports.move_ports(mgr, context, instance, mgr.host)
        bdi = volume_moves.connect_here(mgr, context, instance)
        mgr.driver.finish_revert_migration(context, instance, network_info, migration,
                                           block_device_info=bdi,
                                           power_on=old_vm_state != vm_states.STOPPED)
        instance.power_state = mgr.driver.get_info(instance).state
        instance.vm_state = old_vm_state
        instance.task_state = None
        instance.save(expected_task_state=task_states.RESIZE_REVERTING)
        notifications.notify_about_instance_action(context, instance, mgr.host,
                                                   'resize_revert', notifications.END)
    LOG.info('Resize of %s reverted', instance.uuid)


# -- automatic confirm (destination's periodic task) ---------------------------------------

def _instance_of(context: RequestContext,
                 migration: objects.Migration) -> objects.Instance | None:
    """:returns: the migration's instance, or None if it names none that exists"""
    if migration.instance_uuid is None:
        return None
    try:
        return objects.Instance.get_by_uuid(context, migration.instance_uuid)
    except exception.InstanceNotFound:
        return None


def confirm_unconfirmed_resizes(mgr: ComputeManager, context: RequestContext, window: int) -> int:
    """Confirm the resizes to this host left in VERIFY_RESIZE longer than ``window``
    seconds, as their owner would. :returns: how many were confirmed"""
    from novalite.compute import instance_actions
    count = 0
    for migration in objects.MigrationList.get_unconfirmed_by_dest_compute(
            context, window, mgr.host):
        instance = _instance_of(context, migration)
        if instance is None:
            _save_migration(migration, 'error')
            continue
        if instance.vm_state != vm_states.RESIZED or instance.task_state is not None:
            LOG.info('Not confirming the resize of %s: it is %s/%s', instance.uuid,
                     instance.vm_state, instance.task_state)
            continue
        LOG.info('Confirming the resize of %s after %ds', instance.uuid, window)
        objects.InstanceAction.action_start(context, instance.uuid,
                                            instance_actions.CONFIRM_RESIZE,
                                            want_result=False)
        _save_migration(migration, 'confirming')
        _rpcapi().confirm_resize(context, instance, migration)
        count += 1
    return count
