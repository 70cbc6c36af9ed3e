"""Keeping each instance's recorded power state in line with its guest.

Three ways in: guest lifecycle events from the driver (at once), the
``sync_power_states`` periodic task (catches what events missed), and start-up
recovery of instances an interrupted operation left in a transient state. The rules
are Nova's: an instance with a task under way is left alone; a guest found stopped
under an ACTIVE (or PAUSED) instance makes the instance STOPPED; a guest found running
under a STOPPED instance is powered off.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import guest_audit, power_state, vm_states
from novalite.objects import instance_fault

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

# vm_states whose power state is not synced (their own operation owns it).
_NOT_SYNCED = (vm_states.BUILDING, vm_states.RESCUED, vm_states.RESIZED,
               vm_states.SUSPENDED, vm_states.ERROR, vm_states.SHELVED,
               vm_states.SHELVED_OFFLOADED)
_OFF = (power_state.NOSTATE, power_state.SHUTDOWN, power_state.CRASHED)

# The vm_state of an instance whose interrupted operation is abandoned, by what the
# guest is now doing.
_VM_STATE_OF = {power_state.RUNNING: vm_states.ACTIVE, power_state.PAUSED: vm_states.PAUSED,
                power_state.SUSPENDED: vm_states.SUSPENDED,
                power_state.SHUTDOWN: vm_states.STOPPED, power_state.CRASHED: vm_states.STOPPED}


def query_power_state(mgr: ComputeManager, instance: objects.Instance) -> int:
    """What the hypervisor says; NOSTATE when it has no such guest."""
    try:
        return mgr.driver.get_info(instance).state
    except exception.InstanceNotFound:
        return power_state.NOSTATE


def handle_lifecycle_event(mgr: ComputeManager, context: RequestContext, instance_uuid: str,
                           event: str) -> None:
    """A guest of this host changed state (called with the instance lock held).

    The event only says that something happened: the guest's state is read again,
    because an operation may have changed it since (a soft reboot stops then starts).
    """
    try:
        instance = objects.Instance.get_by_uuid(context, instance_uuid)
    except exception.InstanceNotFound:
        return  # not an instance (any more)
    LOG.info('Guest of %s %s', instance_uuid, event)
    sync_instance_power_state(mgr, context, instance, query_power_state(mgr, instance))


def sync_power_states(mgr: ComputeManager, context: RequestContext) -> None:
    """Align every instance of this host with its guest (the periodic task's work).

    An instance whose lock is taken is busy with an operation: it waits for the next run.
    """
    instances = objects.InstanceList.get_by_host(context, mgr.host)
    guests = mgr.driver.list_instance_uuids()
    if len(guests) != len(instances):
        LOG.warning('While synchronising power states, found %d instances in the database '
                    'and %d guests on the hypervisor', len(instances), len(guests))
    if set(guests) - {instance.uuid for instance in instances}:
        for uuid, why in guest_audit.find_unknown_guests(mgr, context).items():
            LOG.warning('Guest %s on this host belongs to no instance of it (%s)', uuid, why)
    for instance in instances:
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue
        try:
            sync_instance_power_state(mgr, context, instance,
                                      query_power_state(mgr, instance))
        except Exception:
            LOG.exception('Could not synchronise the power state of %s', instance.uuid)
        finally:
            lock.release()


def sync_instance_power_state(mgr: ComputeManager, context: RequestContext,
                              instance: objects.Instance, vm_power: int) -> None:
    """Record ``vm_power`` on ``instance`` and act on what it means for its vm_state."""
    if instance.host != mgr.host or instance.deleted:
        return
    if instance.task_state is not None:
        LOG.debug('Instance %s has a task under way (%s); not syncing', instance.uuid,
                  instance.task_state)
        return
    vm_state = instance.vm_state
    if vm_power != instance.power_state:
        instance.power_state = vm_power
        if not _save(instance, vm_state):
            return
    if vm_state in _NOT_SYNCED:
        return
    if vm_state in (vm_states.ACTIVE, vm_states.PAUSED):
        if vm_power in (power_state.SHUTDOWN, power_state.CRASHED):
            LOG.warning('Instance %s shut down by itself; it is now stopped', instance.uuid)
            _stop(mgr, instance, vm_state)
        elif vm_power == power_state.NOSTATE:
            # The hypervisor may be restarting: only say so, as Nova does.
            LOG.warning('Instance %s is %s but its guest is not found', instance.uuid,
                        vm_state)
        elif vm_power != power_state.RUNNING and vm_state == vm_states.ACTIVE:
            LOG.warning('Instance %s is active but its guest is %s', instance.uuid,
                        power_state.STATE_MAP.get(vm_power))
    elif vm_state == vm_states.STOPPED and vm_power not in _OFF:
        LOG.warning('Instance %s is stopped but its guest is %s; powering it off',
                    instance.uuid, power_state.STATE_MAP.get(vm_power))
        _stop(mgr, instance, vm_state)
    elif vm_state in (vm_states.SOFT_DELETED, vm_states.DELETED) and vm_power not in _OFF:
        LOG.warning('Instance %s is deleted but its guest is %s', instance.uuid,
                    power_state.STATE_MAP.get(vm_power))


def _stop(mgr: ComputeManager, instance: objects.Instance, vm_state: str) -> None:
    """Make the instance STOPPED with its guest off (what Nova's force_stop ends in)."""
    try:
        mgr.driver.power_off(instance)
    except exception.InstanceNotFound:
        pass
    instance.power_state = query_power_state(mgr, instance)
    instance.vm_state = vm_states.STOPPED
    _save(instance, vm_state)


def _save(instance: objects.Instance, vm_state: str | None) -> bool:
    """Save unless an operation started or the instance went meanwhile."""
    try:
        instance.save(expected_task_state=[None], expected_vm_state=vm_state)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError,
            exception.InstanceInvalidState) as exc:
        LOG.info('Not syncing the power state of %s: %s', instance.uuid, exc)
        return False
    return True


def recover_instance(mgr: ComputeManager, context: RequestContext,
                     instance: objects.Instance) -> None:
    """At start-up: end the operation this host was doing on ``instance`` when it
    stopped. The instance takes the state its guest is really in; an instance whose
    guest is gone goes to ERROR with a fault saying so."""
    vm_power = query_power_state(mgr, instance)
    task_state = instance.task_state
    instance.power_state = vm_power
    instance.task_state = None
    instance.vm_state = _VM_STATE_OF.get(vm_power, vm_states.ERROR)
    try:
        instance.save(expected_task_state=task_state)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as exc:
        LOG.info('Not recovering %s: %s', instance.uuid, exc)
        return
    LOG.warning('Instance %s was %s when this service stopped; it is now %s (guest %s)',
                instance.uuid, task_state, instance.vm_state,
                power_state.STATE_MAP.get(vm_power))
    if instance.vm_state == vm_states.ERROR:
        instance_fault.add_instance_fault_from_exc(
            context, instance, exception.GuestGone(uuid=instance.uuid, host=mgr.host),
            host=mgr.host)
