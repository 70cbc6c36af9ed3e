"""Deleting an instance on this host, and finishing the deletes a failure interrupted.

A delete always finishes. A call to Placement, the conductor (the database) or the bus
that fails for a moment is tried again with a growing pause (``novalite.transient``);
the allocation is freed before the instance record is destroyed,
so a server that answers 404 holds no allocation. A delete that still cannot finish
leaves the instance DELETING; ``retry_pending_deletes``, a periodic task of this host,
runs it again later. Every step is safe to repeat: a guest, a port or an allocation
already gone is a success.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, notifications, objects, transient
from novalite.compute import (
    block_devices,
    consoles,
    instance_actions,
    power_state,
    task_states,
)
from novalite.context import RequestContext
from novalite.network import model
from novalite.objects.instance import Instance

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager

LOG = logging.getLogger(__name__)

TERMINATE_EVENT = instance_actions.TERMINATE_EVENT

# A step that fails for a moment is tried RETRIES more times, the pause growing by
# a second each time up to RETRY_MAX_DELAY: about 15 seconds in all, enough
# for a conductor, a database or Placement that restarts, short enough that an RPC
# worker is not held for long. Longer outages are the periodic task's.
RETRIES = 5
RETRY_MAX_DELAY = 5.0

T = TypeVar('T')


def retried(step: Callable[[], T], what: str) -> T:
    """Run ``step``; while it fails with a transient error (``novalite.transient``),
    run it again with a growing pause, ``RETRIES`` times at most.

    :raises: the last transient error when every attempt failed, or any other error at
        once
    """
    return transient.call(what, step, max_retries=RETRIES, max_pause=RETRY_MAX_DELAY)


def cached_network_info(instance: Instance) -> model.NetworkInfo:
    return instance.info_cache.network_info if instance.obj_attr_is_set('info_cache') \
        else []


def release_ports(mgr: ComputeManager, context: RequestContext, instance: Instance,
                  network_info: model.NetworkInfo | None = None,
                  preserve: list[str] | None = None) -> None:
    """Release the instance's ports (``preserve``: the user's, unbound and kept); with
    Neutron unreachable the port audit of this host (``compute/port_audit.py``)
    finishes it later."""
    if network_info is None:
        network_info = cached_network_info(instance)
    try:
        mgr.network_api.deallocate_for_instance(context, instance, network_info,
                                                preserve=preserve or ())
    except Exception as exc:
        LOG.warning('Could not release the ports of %s now: %s', instance.uuid, exc)


def free_allocation(mgr: ComputeManager, context: RequestContext,
                    instance_uuid: str) -> None:
    """Delete the instance's allocations in Placement (none left is a success).

    :raises ResourceProviderError: Placement still failed after the retries
    """
    retried(lambda: mgr.reportclient.delete_allocation_for_instance(context,
                                                                    instance_uuid),
            'Deleting the allocations of %s' % instance_uuid)


def terminate_instance(mgr: ComputeManager, context: RequestContext,
                       instance: Instance,
                       bdms: list[objects.BlockDeviceMapping] | None = None) -> None:
    """Destroy the guest, let its volumes go, free its ports and allocation, then
    delete the record.

    ``bdms``: the server's block device mappings, as the API read them (a delete this
    host finishes by itself reads them again).

    The API started TERMINATE_EVENT with the delete action (one round trip less per
    delete); a delete this host finishes after a restart has none, and event_finish
    then records the whole event.

    :raises: a transient error of Placement, the bus or the database that outlasted
        the retries: the instance is left DELETING, and ``retry_pending_deletes`` runs
        the delete again
    """
    notifications.notify_about_instance_action(context, instance, mgr.host, 'delete',
                                               notifications.START)
    if bdms is None:
        bdms = list(retried(lambda: objects.BlockDeviceMappingList.get_by_instance_uuid(
            context, instance.uuid), 'Reading the volumes of %s' % instance.uuid))
    mgr.driver.destroy(context, instance, network_info=cached_network_info(instance),
                       block_device_info=block_devices.block_device_info(bdms))
    # The console is gone with the guest: its tokens must open nothing.
    retried(lambda: consoles.clean_tokens(context, instance.uuid),
            'Deleting the console tokens of %s' % instance.uuid)
    # Before the record: a volume must not stay attached to a server that is gone.
    block_devices.detach_on_delete(mgr, context, instance, bdms)
    release_ports(mgr, context, instance)
    # Before the record: once the server answers 404 it must hold nothing in Placement.
    free_allocation(mgr, context, instance.uuid)
    try:
        retried(lambda: objects.InstanceActionEvent.event_finish(
            context, instance.uuid, TERMINATE_EVENT, host=mgr.host),
            'Finishing the delete event of %s' % instance.uuid)
    except exception.InstanceActionNotFound:
        pass
    # Written with the delete itself, in one round trip.
    instance.power_state = power_state.NOSTATE
    instance.terminated_at = timeutils.utcnow(with_timezone=True)
    try:
        retried(instance.destroy, 'Deleting the record of %s' % instance.uuid)
    except exception.InstanceNotFound:
        # An attempt whose answer the bus lost, or another delete, got there first.
        LOG.info('Instance %s was already deleted', instance.uuid)
    mgr.rt.free_instance(context, instance)
    notifications.notify_about_instance_action(context, instance, mgr.host, 'delete',
                                               notifications.END)


def terminate_or_leave_pending(mgr: ComputeManager, context: RequestContext,
                               instance: Instance,
                               bdms: list[objects.BlockDeviceMapping] | None = None) -> None:
    """Run the delete; one that an outage outlasted stays DELETING for the periodic
    task, said in a warning (an outage, not a fault of this host)."""
    try:
        terminate_instance(mgr, context, instance, bdms)
    except exception.InstanceNotFound:
        LOG.info('Instance %s was already deleted', instance.uuid)
    except Exception as exc:
        if not transient.is_transient(exc):
            raise
        LOG.warning('The delete of %s could not finish now (%s: %s); it stays DELETING '
                    'and the pending delete task of %s finishes it', instance.uuid,
                    type(exc).__name__, exc, mgr.host)


def _age(instance: Instance, now: datetime.datetime) -> float:
    since = instance.updated_at or instance.created_at
    if since is None:
        return float('inf')
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    return (now - since).total_seconds()


def retry_pending_deletes(mgr: ComputeManager, context: RequestContext,
                          grace: int) -> list[str]:
    """Run again the deletes of this host's instances left DELETING with no delete
    running (its instance lock free) for at least ``grace`` seconds.

    :returns: the uuids of the instances deleted
    """
    now = timeutils.utcnow(with_timezone=True)
    finished = []
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if instance.task_state != task_states.DELETING or _age(instance, now) < grace:
            continue
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue  # the delete is running; it ends on its own
        try:
            LOG.info('Finishing the pending delete of %s', instance.uuid)
            terminate_instance(mgr, context, instance)
            finished.append(instance.uuid)
        except exception.InstanceNotFound:
            LOG.info('Instance %s was deleted meanwhile', instance.uuid)
        except Exception as exc:
            LOG.warning('The pending delete of %s failed again, next run tries again: '
                        '%s: %s', instance.uuid, type(exc).__name__, exc)
        finally:
            lock.release()
    return finished
