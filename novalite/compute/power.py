"""Rebooting, stopping and starting an instance on this host, and reading its console.

Called by the compute manager with the instance lock held, so lifecycle events and the
power-state sync wait until the operation has settled the instance. Each operation
records an instance-action event; a driver failure puts the instance back in the
vm_state it had, with no task, an instance fault, and the event marked Error.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import task_states, vm_states
from novalite.conf import CONF
from novalite.objects import instance_fault

LOG = logging.getLogger(__name__)

REBOOT_EVENT = 'compute_reboot_instance'
STOP_EVENT = 'compute_stop_instance'
START_EVENT = 'compute_start_instance'


@contextlib.contextmanager
def _operation(mgr: Any, context: Any, instance: Any, event: str,
               vm_state_before: str) -> Iterator[None]:
    """Record ``event`` around the work; on failure roll the instance back. The error
    stops here: the caller of a cast never sees it, the fault and the event tell it."""
    objects.InstanceActionEvent.event_start(context, instance.uuid, event, host=mgr.host)
    try:
        yield
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                 exc_val=message, exc_tb=trace, host=mgr.host)
        LOG.exception('%s of instance %s failed', event, instance.uuid)
        _revert(mgr, context, instance, vm_state_before, exc)
        return
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, host=mgr.host)


def _revert(mgr: Any, context: Any, instance: Any, vm_state: str, exc: BaseException) -> None:
    # The fault first: once the task is cleared, a client may look for it.
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=mgr.host)
    instance.vm_state = vm_state
    instance.task_state = None
    try:
        instance.power_state = mgr.driver.get_info(instance).state
    except Exception:
        LOG.debug('No power state for %s after the failure', instance.uuid)
    try:
        instance.save()
    except exception.InstanceNotFound:
        LOG.info('Instance %s was deleted meanwhile', instance.uuid)


def _finish(mgr: Any, instance: Any, vm_state: str, expected_task_state: Any) -> None:
    instance.power_state = mgr.driver.get_info(instance).state
    instance.vm_state = vm_state
    instance.task_state = None
    instance.save(expected_task_state=expected_task_state)


def reboot_instance(mgr: Any, context: Any, instance: Any, reboot_type: str) -> None:
    """Reboot the guest (SOFT or HARD); a hard reboot also starts a stopped instance."""
    with _operation(mgr, context, instance, REBOOT_EVENT, instance.vm_state):
        mgr.driver.reboot(context, instance, reboot_type=reboot_type)
        # A hard reboot may have been asked for while a soft one was under way.
        _finish(mgr, instance, vm_states.ACTIVE,
                [task_states.REBOOTING, task_states.REBOOTING_HARD])
        LOG.info('Instance %s rebooted (%s)', instance.uuid, reboot_type)


def stop_instance(mgr: Any, context: Any, instance: Any, clean_shutdown: bool = True) -> None:
    """Power the guest off, giving it ``[DEFAULT] shutdown_timeout`` seconds to shut
    down cleanly when ``clean_shutdown``."""
    timeout = CONF.shutdown_timeout if clean_shutdown else 0
    with _operation(mgr, context, instance, STOP_EVENT, instance.vm_state):
        mgr.driver.power_off(instance, timeout=timeout)
        _finish(mgr, instance, vm_states.STOPPED, task_states.POWERING_OFF)
        LOG.info('Instance %s stopped', instance.uuid)


def start_instance(mgr: Any, context: Any, instance: Any) -> None:
    with _operation(mgr, context, instance, START_EVENT, instance.vm_state):
        mgr.driver.power_on(context, instance)
        _finish(mgr, instance, vm_states.ACTIVE, task_states.POWERING_ON)
        LOG.info('Instance %s started', instance.uuid)


def get_console_output(mgr: Any, context: Any, instance: Any,
                       tail_length: int | None) -> str:
    """The guest's console log, its last ``tail_length`` lines if given."""
    output = mgr.driver.get_console_output(context, instance)
    if isinstance(output, bytes):
        output = output.decode('utf-8', errors='replace')
    if tail_length is not None:
        lines = output.splitlines()
        output = '\n'.join(lines[-tail_length:] if tail_length else [])
    return output
