"""Soft delete on this host: keep a deleted server restorable for
``[DEFAULT] reclaim_instance_interval`` seconds, then reclaim it.

A soft-deleted instance keeps its guest (powered off), its disks and its Placement
allocation, so a restore needs no scheduling and cannot fail for lack of room. The
periodic reclaim deletes it as a DELETE would have (allocation freed, record gone).
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, objects
from novalite.compute import delete, task_states, vm_states
from novalite.compute.operation import finish, operation

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def soft_delete_instance(mgr: ComputeManager, context: RequestContext,
                         instance: objects.Instance) -> None:
    with operation(mgr, context, instance, 'compute_soft_delete_instance',
                   instance.vm_state, 'soft_delete'):
        try:
            mgr.driver.soft_delete(instance)
        except NotImplementedError:
            # As Nova: a driver with nothing better to do powers the guest off.
            mgr.driver.power_off(instance)
        finish(mgr, instance, vm_states.SOFT_DELETED, [task_states.SOFT_DELETING])
        LOG.info('Instance %s soft-deleted', instance.uuid)


def restore_instance(mgr: ComputeManager, context: RequestContext,
                     instance: objects.Instance) -> None:
    with operation(mgr, context, instance, 'compute_restore_instance',
                   vm_states.SOFT_DELETED, 'restore'):
        try:
            mgr.driver.restore(instance)
        except NotImplementedError:
            mgr.driver.power_on(context, instance)
        finish(mgr, instance, vm_states.ACTIVE, task_states.RESTORING)
        LOG.info('Instance %s restored', instance.uuid)


def deleted_old_enough(instance: objects.Instance, interval: int,
                       now: datetime.datetime | None = None) -> bool:
    """True when the instance was soft-deleted more than ``interval`` seconds ago (one
    with no deletion time is old enough, as in Nova)."""
    deleted_at = instance.deleted_at if instance.obj_attr_is_set('deleted_at') else None
    if deleted_at is None:
        return True
    now = now or timeutils.utcnow(with_timezone=True)
    if deleted_at.tzinfo is None:
        now = now.replace(tzinfo=None)
    return (now - deleted_at).total_seconds() > interval


def reclaim_queued_deletes(mgr: ComputeManager, context: RequestContext,
                           interval: int) -> list[str]:
    """Delete this host's soft-deleted instances older than ``interval`` seconds.

    :returns: the uuids reclaimed
    """
    reclaimed = []
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if (instance.vm_state != vm_states.SOFT_DELETED or instance.task_state is not None
                or not deleted_old_enough(instance, interval)):
            continue
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue  # a restore or a delete is working on it
        try:
            LOG.info('Reclaiming deleted instance %s', instance.uuid)
            delete.terminate_instance(mgr, context, instance)
            reclaimed.append(instance.uuid)
        except exception.InstanceNotFound:
            LOG.info('Instance %s was deleted meanwhile', instance.uuid)
        except Exception as exc:
            LOG.warning('Periodic reclaim failed to delete instance %s: %s',
                        instance.uuid, exc)
        finally:
            lock.release()
    return reclaimed
