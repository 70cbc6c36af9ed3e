"""In-place actions on this host: pause, unpause, suspend, resume, the admin password
and crash dumps.

Called by the compute manager with the instance lock held. Each runs in
``operation.operation`` (instance-action event ``compute_<method>``, notifications
``instance.<action>.start/end/error``, rollback to the previous vm_state with a fault).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import power_state, task_states, vm_states
from novalite.compute.operation import finish, operation

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def pause_instance(mgr: ComputeManager, context: RequestContext,
                   instance: objects.Instance) -> None:
    """Freeze the guest's vCPUs (its memory stays where it is)."""
    with operation(mgr, context, instance, 'compute_pause_instance', instance.vm_state,
                   'pause'):
        mgr.driver.pause(instance)
        finish(mgr, instance, vm_states.PAUSED, task_states.PAUSING)
        LOG.info('Instance %s paused', instance.uuid)


def unpause_instance(mgr: ComputeManager, context: RequestContext,
                     instance: objects.Instance) -> None:
    with operation(mgr, context, instance, 'compute_unpause_instance', instance.vm_state,
                   'unpause'):
        mgr.driver.unpause(instance)
        finish(mgr, instance, vm_states.ACTIVE, task_states.UNPAUSING)
        LOG.info('Instance %s unpaused', instance.uuid)


def suspend_instance(mgr: ComputeManager, context: RequestContext,
                     instance: objects.Instance) -> None:
    """Save the guest's memory to disk and stop it."""
    with operation(mgr, context, instance, 'compute_suspend_instance', instance.vm_state,
                   'suspend'):
        mgr.driver.suspend(context, instance)
        finish(mgr, instance, vm_states.SUSPENDED, task_states.SUSPENDING)
        LOG.info('Instance %s suspended', instance.uuid)


def resume_instance(mgr: ComputeManager, context: RequestContext,
                    instance: objects.Instance) -> None:
    with operation(mgr, context, instance, 'compute_resume_instance', instance.vm_state,
                   'resume'):
        mgr.driver.resume(context, instance)
        finish(mgr, instance, vm_states.ACTIVE, task_states.RESUMING)
        LOG.info('Instance %s resumed', instance.uuid)


def trigger_crash_dump(mgr: ComputeManager, context: RequestContext,
                       instance: objects.Instance) -> None:
    """Send the guest an NMI. Neither vm_state nor power state changes: what the guest
    does with it is its own configuration."""
    with operation(mgr, context, instance, 'compute_trigger_crash_dump', instance.vm_state,
                   'trigger_crash_dump'):
        mgr.driver.trigger_crash_dump(instance)
        LOG.info('Crash dump triggered in instance %s', instance.uuid)


def set_admin_password(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                       new_pass: str) -> None:
    """Set the guest's password; the caller (an RPC call) gets the error.

    Failures keep the instance ACTIVE (only the task is cleared) and answer with
    Nova's exceptions, which the API turns into 409s; an unexpected error is reported
    as ``InstancePasswordSetFailed`` without its text, which might hold the password.
    """
    event = 'compute_set_admin_password'
    objects.InstanceActionEvent.event_start(context, instance.uuid, event, host=mgr.host)
    try:
        _set_admin_password(mgr, instance, new_pass)
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                 exc_val=message, exc_tb=trace, host=mgr.host)
        raise
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, host=mgr.host)


def _set_admin_password(mgr: ComputeManager, instance: objects.Instance, new_pass: str) -> None:
    if mgr.driver.get_info(instance).state != power_state.RUNNING:
        _clear_task(instance)
        raise exception.InstancePasswordSetFailed(
            instance=instance.uuid, reason='instance %s is not running' % instance.uuid)
    try:
        mgr.driver.set_admin_password(instance, new_pass)
    except (exception.InstanceAgentNotEnabled, exception.SetAdminPasswdNotSupported):
        _clear_task(instance)
        raise
    except NotImplementedError as exc:
        _clear_task(instance)
        raise NotImplementedError('set_admin_password is not implemented by this driver '
                                  'or guest instance.') from exc
    except exception.UnexpectedTaskStateError:
        raise
    except Exception as exc:
        LOG.exception('set_admin_password failed for %s', instance.uuid)
        _clear_task(instance)
        raise exception.InstancePasswordSetFailed(
            instance=instance.uuid, reason='error setting admin password') from exc
    _clear_task(instance)
    LOG.info('Admin password set on instance %s', instance.uuid)


def _clear_task(instance: objects.Instance) -> None:
    instance.task_state = None
    instance.save(expected_task_state=task_states.UPDATING_PASSWORD)
