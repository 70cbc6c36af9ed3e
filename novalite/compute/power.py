"""Rebooting, stopping and starting an instance on this host, and reading its console.

Called by the compute manager with the instance lock held, so lifecycle events and the
power-state sync wait until the operation has settled the instance. Each runs in
``operation.operation`` (instance-action event, notifications, rollback on failure).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.compute import task_states, vm_states
from novalite.compute.operation import finish, operation
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

REBOOT_EVENT = 'compute_reboot_instance'
STOP_EVENT = 'compute_stop_instance'
START_EVENT = 'compute_start_instance'


def reboot_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    reboot_type: str) -> None:
    """Reboot the guest (SOFT or HARD); a hard reboot also starts a stopped instance."""
    with operation(mgr, context, instance, REBOOT_EVENT, instance.vm_state, 'reboot'):
        mgr.driver.reboot(context, instance, reboot_type=reboot_type)
        # A hard reboot may have been asked for while a soft one was under way.
        finish(mgr, instance, vm_states.ACTIVE,
                [task_states.REBOOTING, task_states.REBOOTING_HARD])
        LOG.info('Instance %s rebooted (%s)', instance.uuid, reboot_type)


def stop_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  clean_shutdown: bool = True) -> None:
    """Power the guest off, giving it ``[DEFAULT] shutdown_timeout`` seconds to shut
    down cleanly when ``clean_shutdown``."""
    timeout = CONF.shutdown_timeout if clean_shutdown else 0
    with operation(mgr, context, instance, STOP_EVENT, instance.vm_state, 'power_off'):
        mgr.driver.power_off(instance, timeout=timeout)
        finish(mgr, instance, vm_states.STOPPED, task_states.POWERING_OFF)
        LOG.info('Instance %s stopped', instance.uuid)


def start_instance(mgr: ComputeManager, context: RequestContext,
                   instance: objects.Instance) -> None:
    with operation(mgr, context, instance, START_EVENT, instance.vm_state, 'power_on'):
        mgr.driver.power_on(context, instance)
        finish(mgr, instance, vm_states.ACTIVE, task_states.POWERING_ON)
        LOG.info('Instance %s started', instance.uuid)


def get_console_output(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                       tail_length: int | None) -> str:
    """The guest's console log, its last ``tail_length`` lines if given."""
    output = mgr.driver.get_console_output(context, instance)
    if isinstance(output, bytes):
        output = output.decode('utf-8', errors='replace')
    if tail_length is not None:
        lines = output.splitlines()
        output = '\n'.join(lines[-tail_length:] if tail_length else [])
    return output
