"""The frame of every operation a compute host runs on an instance.

``operation(...)`` records the instance-action event (``compute_<name>``) and sends the
versioned notifications ``instance.<action>.start`` / ``.end`` around the work; when
the work fails, the event is marked Error, ``instance.<action>.error`` is sent, a fault
is recorded, and the instance goes back to the vm_state it had with no task. The error
stops there: the caller of a cast never sees it; the fault and the event tell it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, notifications, objects, rpc
from novalite.objects import instance_fault

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


@contextlib.contextmanager
def operation(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, event: str,
              vm_state_before: str | None, action: str | None = None) -> Iterator[None]:
    """:param event: the instance-action event name (``compute_reboot_instance``)
    :param vm_state_before: what the instance goes back to on failure
    :param action: the notification's action (``reboot`` → ``instance.reboot.*``)
    """
    objects.InstanceActionEvent.event_start(context, instance.uuid, event, host=mgr.host)
    if action:
        notifications.notify_about_instance_action(context, instance, mgr.host, action,
                                                   notifications.START)
    try:
        yield
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                 exc_val=message, exc_tb=trace, host=mgr.host)
        if rpc.is_expected(exc):  # a refusal or a lost race: its fault tells the user
            LOG.warning('%s of instance %s failed: %s', event, instance.uuid, exc)
        else:
            LOG.exception('%s of instance %s failed', event, instance.uuid)
        revert(mgr, context, instance, vm_state_before, exc)
        if action:
            notifications.notify_about_instance_action(
                context, instance, mgr.host, action, notifications.ERROR, exception=exc)
        return
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, host=mgr.host)
    if action:
        notifications.notify_about_instance_action(context, instance, mgr.host, action,
                                                   notifications.END)


@contextlib.contextmanager
def recorded(context: RequestContext, instance_uuid: str, event: str, host: str,
             swallow: bool = False) -> Iterator[None]:
    """Only the instance-action event around the work (the instance's state is the
    caller's): started, then finished, or marked Error with the failure. The failure is
    raised again unless ``swallow``; then it is logged as a warning."""
    objects.InstanceActionEvent.event_start(context, instance_uuid, event, host=host)
    try:
        yield
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance_uuid, event,
                                                 exc_val=message, exc_tb=trace, host=host)
        if not swallow:
            raise
        LOG.warning('%s of instance %s failed: %s', event, instance_uuid, exc)
        return
    objects.InstanceActionEvent.event_finish(context, instance_uuid, event, host=host)


def revert(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
           vm_state: str | None, exc: BaseException) -> None:
    """The instance back in ``vm_state`` with no task and a fault saying why.

    Only if its task is still the operation's: a delete that started meanwhile (task
    ``deleting``) is not undone.
    """
    # The fault first: once the task is cleared, a client may look for it.
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=mgr.host)
    expected = instance.task_state
    instance.vm_state = vm_state
    instance.task_state = None
    try:
        instance.power_state = mgr.driver.get_info(instance).state
    except Exception:
        LOG.debug('No power state for %s after the failure', instance.uuid)
    try:
        instance.save(expected_task_state=[expected])
    except exception.InstanceNotFound:
        LOG.info('Instance %s was deleted meanwhile', instance.uuid)
    except exception.UnexpectedTaskStateError as err:
        LOG.info('Not rolling %s back: %s', instance.uuid, err)


def finish(mgr: ComputeManager, instance: objects.Instance, vm_state: str,
           expected_task_state: str | list[str | None] | None) -> None:
    """The instance in ``vm_state`` with no task and its guest's power state."""
    instance.power_state = mgr.driver.get_info(instance).state
    instance.vm_state = vm_state
    instance.task_state = None
    instance.save(expected_task_state=expected_task_state)
