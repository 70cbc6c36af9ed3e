"""Compute API of the in-place actions: pause, suspend, lock, rescue, the admin
password, crash dumps, reset state, and soft delete (restore, force delete).

A flow module of ``novalite.compute.api.API``, which makes each function a method:
each takes the API first and uses its ``compute_rpcapi``, ``cast_power`` (record the
action, set the task state, cast) and ``host_context``.
The state and lock checks are Nova's ``check_instance_state`` / ``check_instance_lock``
of the same methods.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, notifications, objects, quota, rpc
from novalite.compute import instance_actions, instance_edit, task_states, vm_states
from novalite.conf import CONF
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

LOG = logging.getLogger(__name__)

RESCUE_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.ERROR)
CRASH_DUMP_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.RESCUED,
                     vm_states.RESIZED, vm_states.ERROR)
LOCKED_REASON = 'locked_reason'


# -- pause and suspend ---------------------------------------------------------------


def pause(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Freeze a running server (it keeps its memory on the host)."""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'pause', (vm_states.ACTIVE,))
    api.cast_power(context, instance, instance_actions.PAUSE, task_states.PAUSING,
                     lambda cctxt: api.compute_rpcapi.pause_instance(cctxt, instance))


def unpause(api: API, context: RequestContext, instance: objects.Instance) -> None:
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'unpause', (vm_states.PAUSED,))
    api.cast_power(context, instance, instance_actions.UNPAUSE, task_states.UNPAUSING,
                     lambda cctxt: api.compute_rpcapi.unpause_instance(cctxt, instance))


def suspend(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Save a running server's memory to disk and stop it."""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'suspend', (vm_states.ACTIVE,))
    api.cast_power(context, instance, instance_actions.SUSPEND,
                     task_states.SUSPENDING,
                     lambda cctxt: api.compute_rpcapi.suspend_instance(cctxt, instance))


def resume(api: API, context: RequestContext, instance: objects.Instance) -> None:
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'resume', (vm_states.SUSPENDED,))
    api.cast_power(context, instance, instance_actions.RESUME, task_states.RESUMING,
                     lambda cctxt: api.compute_rpcapi.resume_instance(cctxt, instance))


# -- lock ----------------------------------------------------------------------------


def lock(api: API, context: RequestContext, instance: objects.Instance,
         reason: str | None = None) -> None:
    """Lock the server: only admins act on it until it is unlocked. The owner
    locking it again changes nothing (an admin's lock is kept, as in Nova)."""
    is_owner = instance.project_id == context.project_id
    if instance.locked and is_owner:
        return
    with _cell_context(api, context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid, instance_actions.LOCK,
                                            want_result=False)
        with _api_event(cctxt, instance, 'api_lock'):
            instance.locked = True
            instance.locked_by = 'owner' if is_owner else 'admin'
            if reason:
                instance.system_metadata = dict(instance.system_metadata,
                                                **{LOCKED_REASON: reason})
            instance.save()
        _notify_api(cctxt, instance, 'lock')


def is_expected_locked_by(api: API, context: RequestContext, instance: objects.Instance) -> bool:
    """False when the lock was set by the other kind of caller (an admin's lock
    seen by the owner, or the owner's seen by an admin)."""
    expected = 'owner' if instance.project_id == context.project_id else 'admin'
    return not instance.locked_by or instance.locked_by == expected


def unlock(api: API, context: RequestContext, instance: objects.Instance) -> None:
    with _cell_context(api, context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.UNLOCK, want_result=False)
        with _api_event(cctxt, instance, 'api_unlock'):
            instance.locked = False
            instance.locked_by = None
            instance.system_metadata = {k: v for k, v in
                                        instance.system_metadata.items()
                                        if k != LOCKED_REASON}
            instance.save()
        _notify_api(cctxt, instance, 'unlock')


# -- rescue --------------------------------------------------------------------------


def rescue(api: API, context: RequestContext, instance: objects.Instance,
           rescue_password: str | None = None, rescue_image_ref: str | None = None,
           clean_shutdown: bool = True, allow_bfv_rescue: bool = False) -> None:
    """Boot the server from a rescue image with its own disk attached.

    :raises UnsupportedRescueImage: (400) the image cannot be found
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'rescue', RESCUE_STATES)
    if rescue_image_ref:
        try:
            api.image_api.get(context, rescue_image_ref)
        except exception.ImageNotFound as exc:
            LOG.warning('Failed to fetch rescue image %s', rescue_image_ref)
            raise exception.UnsupportedRescueImage(image=rescue_image_ref) from exc
    # novalite servers always boot from a local image disk: the volume-backed
    # cases of Nova (and 2.87's stable rescue of them) never arise.
    api.cast_power(context, instance, instance_actions.RESCUE, task_states.RESCUING,
                     lambda cctxt: api.compute_rpcapi.rescue_instance(
                         cctxt, instance, rescue_password, rescue_image_ref,
                         clean_shutdown))


def unrescue(api: API, context: RequestContext, instance: objects.Instance) -> None:
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'unrescue', (vm_states.RESCUED,))
    api.cast_power(context, instance, instance_actions.UNRESCUE,
                     task_states.UNRESCUING,
                     lambda cctxt: api.compute_rpcapi.unrescue_instance(cctxt, instance))


# -- password, crash dump ------------------------------------------------------------


def set_admin_password(api: API, context: RequestContext, instance: objects.Instance,
                       password: str) -> None:
    """Set the guest's admin password; waits for the host's answer (a call)."""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'set_admin_password',
                                       (vm_states.ACTIVE,))
    api.cast_power(context, instance, instance_actions.CHANGE_PASSWORD,
                     task_states.UPDATING_PASSWORD,
                     lambda cctxt: api.compute_rpcapi.set_admin_password(
                         cctxt, instance, password))


def trigger_crash_dump(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Send the guest an NMI; no task state, as in Nova."""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'trigger_crash_dump',
                                       CRASH_DUMP_STATES)
    with api.host_context(context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.TRIGGER_CRASH_DUMP,
                                            want_result=False)
        api.compute_rpcapi.trigger_crash_dump(cctxt, instance)


# -- reset state ---------------------------------------------------------------------


def reset_state(api: API, context: RequestContext, instance: objects.Instance,
                vm_state: str) -> None:
    """An admin's repair: the server in ``vm_state`` with no task (host untouched)."""
    with _cell_context(api, context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.RESET_STATE,
                                            want_result=False)
        instance.vm_state = vm_state
        instance.task_state = None
        instance.save()


# -- soft delete ---------------------------------------------------------------------


def soft_delete(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Delete the server restorably (``[DEFAULT] reclaim_instance_interval``).

    :raises InstanceInvalidState: it never ran or has a task (the caller then
        deletes it for good, as Nova's API does)
    """
    instance_edit.check_instance_lock(context, instance)
    if not instance.obj_attr_is_set('id') or not instance.launched_at:
        raise exception.InstanceInvalidState(
            attr='launched_at', instance_uuid=instance.uuid, state=None,
            method='soft_delete')
    if instance.task_state is not None:
        raise exception.InstanceInvalidState(
            attr='task_state', instance_uuid=instance.uuid, state=instance.task_state,
            method='soft_delete')
    with _cell_context(api, context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.DELETE, want_result=False)
        instance.task_state = task_states.SOFT_DELETING
        instance.deleted_at = timeutils.utcnow(with_timezone=True)
        instance.save(expected_task_state=[None])
        _queue_for_delete(context, instance.uuid, True)
        if _host_is_up(api, cctxt, instance):
            api.compute_rpcapi.soft_delete_instance(cctxt, instance)
            return
        LOG.info('Soft-deleting instance %s locally (its host is down)', instance.uuid)
        instance.vm_state = vm_states.SOFT_DELETED
        instance.task_state = None
        instance.terminated_at = timeutils.utcnow(with_timezone=True)
        instance.save()


def restore(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Bring a SOFT_DELETED server back (its allocation never left).

    :raises TooManyInstances: (403) the project is at its quota meanwhile
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'restore', (vm_states.SOFT_DELETED,))
    flavor = instance.flavor
    quota.check_deltas(context, {'instances': 1, 'cores': flavor.vcpus,
                                 'ram': flavor.memory_mb},
                       instance.project_id, instance.user_id)
    instance.deleted_at = None
    if instance.host:
        api.cast_power(context, instance, instance_actions.RESTORE,
                         task_states.RESTORING,
                         lambda cctxt: api.compute_rpcapi.restore_instance(
                             cctxt, instance))
    else:
        with _cell_context(api, context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.RESTORE,
                                                want_result=False)
            instance.vm_state = vm_states.ACTIVE
            instance.task_state = None
            instance.save(expected_task_state=[None])
    _queue_for_delete(context, instance.uuid, False)


def force_delete(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Delete now, whatever the state (a SOFT_DELETED server is not kept)."""
    api.delete(context, instance)


# -- helpers -------------------------------------------------------------------------


@contextlib.contextmanager
def _cell_context(api: API, context: RequestContext,
                  instance: objects.Instance) -> Iterator[RequestContext]:
    """The server's cell context (no host needed).

    :raises Conflict: (409) the server is still being scheduled
    """
    if not instance.obj_attr_is_set('id'):
        raise exception.Conflict(message='Instance %s is not on a compute host yet.'
                                 % instance.uuid)
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
    assert mapping.cell_mapping is not None, 'a server with an id is in a cell'
    with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
        instance._context = cctxt
        yield cctxt


def _host_is_up(api: API, cctxt: RequestContext, instance: objects.Instance) -> bool:
    if not instance.host:
        return False
    service = objects.Service.get_by_host_and_binary(cctxt, instance.host,
                                                     'novalite-compute')
    return service is not None and \
        api.servicegroup_api.service_is_up(service)


def _queue_for_delete(context: RequestContext, instance_uuid: str, queued: bool) -> None:
    """Mark the server's mapping as deleted or not (what counting from the API
    database and the list of deleted servers go by)."""
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance_uuid)
    mapping.queued_for_delete = queued
    mapping.save()


@contextlib.contextmanager
def _api_event(context: RequestContext, instance: objects.Instance, event: str) -> Iterator[None]:
    """An instance-action event recorded by the API itself (Nova's ``api_`` ones)."""
    objects.InstanceActionEvent.event_start(context, instance.uuid, event, host=CONF.host)
    try:
        yield
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                 exc_val=message, exc_tb=trace,
                                                 host=CONF.host)
        raise
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, host=CONF.host)


def _notify_api(context: RequestContext, instance: objects.Instance, action: str) -> None:
    """``instance.lock`` / ``instance.unlock``: sent by the API, with no phase."""
    notifier = rpc.get_notifier('novalite-api:%s' % CONF.host)
    if notifier is None:
        return
    payload = notifications.instance_payload(
        instance, locked_reason=(instance.system_metadata or {}).get(LOCKED_REASON))
    try:
        notifier.info(context, 'instance.%s' % action, payload)
    except Exception:
        LOG.exception('Could not send notification instance.%s of %s', action,
                      instance.uuid)
