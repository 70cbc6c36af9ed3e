"""Building an instance on this host (hops 7 to 9 of the boot path).

Called by the compute manager with the instance lock held. A build that fails here
goes back to the conductor, which tries the next alternate host or puts the instance
in ERROR with a fault naming the failure; the allocation never outlives the build.
Deletes are in ``compute/delete.py``.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, notifications, objects, utils
from novalite.compute import (
    delete,
    instance_actions,
    instance_events,
    power_sync,
    task_states,
    vm_states,
)
from novalite.network import client as neutron_client
from novalite.network import model
from novalite.network.async_info import AsyncNetworkInfo
from novalite.objects import instance_fault

LOG = logging.getLogger(__name__)

BUILD_EVENT = instance_actions.BUILD_EVENT


@dataclasses.dataclass
class BuildRequestArgs:
    """What the conductor sent along with the instance."""

    image: Any
    request_spec: Any
    filter_properties: dict
    admin_password: str | None
    injected_files: list
    requested_networks: Any
    node: str
    host_list: list


class _Deleted(Exception):
    """The instance was deleted while it was being built."""


def build_and_run_instance(mgr: Any, context: Any, instance: Any, req: BuildRequestArgs) -> None:
    # The conductor started BUILD_EVENT when it handed the build to this host (one round
    # trip less per build); the save that makes the instance ACTIVE finishes it (another).
    notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                               notifications.START)
    try:
        _build(mgr, context, instance, req)
    except _Deleted:
        LOG.info('Instance %s was deleted during its build; cleaning up', instance.uuid)
        cleanup(mgr, context, instance, req.node)
        return
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, BUILD_EVENT,
                                                 exc_val=message, exc_tb=trace, host=mgr.host)
        cleanup(mgr, context, instance, req.node)
        mgr.rt.build_failed(context, req.node)
        notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                                   notifications.ERROR, exception=exc)
        if isinstance(exc, exception.BuildAbortException):
            _error(mgr, context, instance, exc)
        else:
            _reschedule(mgr, context, instance, req, exc)
        return
    mgr.rt.build_succeeded(context, req.node)
    notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                               notifications.END)


def _save(instance: Any, expected_task_state: Any, finish_event: str | None = None) -> None:
    try:
        instance.save(expected_task_state=expected_task_state, finish_event=finish_event)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as exc:
        if isinstance(exc, exception.InstanceNotFound) or 'deleting' in str(exc):
            raise _Deleted() from exc
        raise


def _build(mgr: Any, context: Any, instance: Any, req: BuildRequestArgs) -> None:
    """Claim, network, spawn, ACTIVE.

    The task states are Nova's (networking, block_device_mapping, spawning), but a step
    with nothing to do is not written: without ports to allocate (and novalite has no
    volumes to attach) the claim's save goes straight to spawning. Each save is a round
    trip to the conductor. Ports are allocated in the background from the claim on,
    and written to the instance's cache with the save that makes it ACTIVE.
    """
    utils.hop('compute.locked', instance.uuid)
    has_ports = bool(req.requested_networks) and isinstance(req.requested_networks, list)
    instance.vm_state = vm_states.BUILDING
    instance.task_state = task_states.NETWORKING if has_ports else task_states.SPAWNING
    try:
        mgr.rt.instance_claim(context, instance, req.node,
                              expected_task_state=task_states.SCHEDULING)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as exc:
        if isinstance(exc, exception.InstanceNotFound) or 'deleting' in str(exc):
            raise _Deleted() from exc
        raise
    utils.hop('compute.claimed', instance.uuid)
    # The ports are made while the guest is prepared (the Placement read, the image in
    # spawn); the driver waits for them when it needs them, the build before ACTIVE.
    network_info = AsyncNetworkInfo(functools.partial(
        _allocate_network, mgr, context, instance, req)) if has_ports else None
    try:
        _spawn(mgr, context, instance, req, network_info)
    except BaseException as exc:
        if network_info is not None:
            # Whatever was allocated is released with the instance's ports: the cache
            # tells the user's ports (kept) from the ones made here (deleted).
            instance.info_cache.network_info = network_info.wait_quietly()
        if isinstance(exc, instance_events.WaitCancelled):
            raise _Deleted() from exc
        raise
    utils.hop('compute.active', instance.uuid)
    LOG.info('Instance %s is active on %s', instance.uuid, mgr.host)


def _spawn(mgr: Any, context: Any, instance: Any, req: BuildRequestArgs,
           network_info: AsyncNetworkInfo | None) -> None:
    if network_info is not None:
        instance.task_state = task_states.SPAWNING
        _save(instance, task_states.NETWORKING)
    allocations = (mgr.reportclient.get_allocations_for_consumer(context, instance.uuid)
                   if mgr.driver.spawn_uses_allocations else {})
    image_meta = objects.ImageMeta.from_dict(req.image) if req.image else None
    utils.hop('compute.spawning', instance.uuid)
    mgr.driver.spawn(context, instance, image_meta, req.injected_files, req.admin_password,
                     allocations, network_info=network_info if network_info is not None
                     else [])
    utils.hop('compute.spawned', instance.uuid)
    if network_info is not None:
        # The ports and ACTIVE in one write.
        instance.info_cache.network_info = network_info.wait()
    instance.power_state = mgr.driver.get_info(instance).state
    instance.vm_state = vm_states.ACTIVE
    instance.task_state = None
    instance.launched_at = timeutils.utcnow(with_timezone=True)
    # ACTIVE, and the build event finished, in one round trip to the conductor.
    _save(instance, task_states.SPAWNING, finish_event=BUILD_EVENT)


def _allocate_network(mgr: Any, context: Any, instance: Any,
                      req: BuildRequestArgs) -> model.NetworkInfo:
    """The instance's ports, bound to this host. A binding this host cannot have is
    tried on another host; Neutron failing is not (as Nova: "not rescheduling")."""
    spec = req.request_spec
    groups = list(spec.security_groups) if spec is not None and spec.obj_attr_is_set(
        'security_groups') else []
    try:
        return mgr.network_api.allocate_for_instance(context, instance,
                                                     req.requested_networks, mgr.host,
                                                     security_groups=groups)
    except (exception.NeutronConnectionFailed, neutron_client.NeutronError,
            exception.SecurityGroupNotFound) as exc:
        raise exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='Failed to allocate the network(s) with Neutron, not rescheduling: %s'
            % exc.format_message()) from exc


def cleanup(mgr: Any, context: Any, instance: Any, nodename: str) -> None:
    """Remove what a failed or abandoned build left on this host and in Placement."""
    try:
        mgr.driver.destroy(context, instance,
                           network_info=delete.cached_network_info(instance))
    except Exception:
        LOG.exception('Could not destroy the guest of %s', instance.uuid)
    delete.release_ports(mgr, context, instance)
    mgr.rt.abort_instance_claim(context, instance, nodename)
    try:
        delete.free_allocation(mgr, context, instance.uuid)
    except Exception as exc:
        # A delete waiting for this build frees it again before the record goes; an
        # instance already gone has it removed by the resource tracker's next run.
        LOG.warning('Could not delete the allocations of %s: %s', instance.uuid, exc)


def _error(mgr: Any, context: Any, instance: Any, exc: BaseException) -> None:
    # The fault first: a client that sees ERROR looks for it at once.
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=mgr.host)
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    try:
        instance.save()
    except exception.InstanceNotFound:
        return


def _reschedule(mgr: Any, context: Any, instance: Any, req: BuildRequestArgs,
                exc: BaseException) -> None:
    """Hand the build back to the conductor with the remaining alternates."""
    reason = exc.format_message() if isinstance(exc, exception.NovaliteException) else \
        '%s: %s' % (type(exc).__name__, exc)
    LOG.warning('Build of %s failed on %s: %s', instance.uuid, mgr.host, reason)
    instance.task_state = task_states.SCHEDULING
    instance.host = None
    instance.node = None
    try:
        instance.save()
    except exception.InstanceNotFound:
        return
    retry = dict(req.filter_properties.get('retry') or {})
    retry['exc_reason'] = reason
    retry['failures'] = list(retry.get('failures') or []) + [[mgr.host, reason]]
    retry.setdefault('hosts', [[mgr.host, req.node]])
    mgr.compute_task_api.build_instances(
        context, instances=[instance], image=req.image,
        filter_properties=dict(req.filter_properties, retry=retry),
        admin_password=req.admin_password, injected_files=req.injected_files,
        requested_networks=req.requested_networks, block_device_mapping=[],
        request_spec=req.request_spec, host_lists=[req.host_list])


def fail_stale_builds(mgr: Any, context: Any, timeout: int) -> None:
    now = timeutils.utcnow(with_timezone=True)
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if instance.vm_state != vm_states.BUILDING or instance.created_at is None:
            continue
        if (now - instance.created_at).total_seconds() < timeout:
            continue
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue  # a build is still running; it ends on its own
        try:
            LOG.warning('Build of %s timed out after %ds', instance.uuid, timeout)
            cleanup(mgr, context, instance, instance.node or mgr.host)
            _error(mgr, context, instance, exception.BuildAbortException(
                instance_uuid=instance.uuid,
                reason='the build did not finish within %d seconds' % timeout))
        finally:
            lock.release()


def recover_interrupted_builds(mgr: Any, context: Any) -> None:
    """On start-up: a build this host was doing when it stopped cannot resume. Put it in
    ERROR with a fault and free its allocation; finish deletes that were under way; any
    other operation ends with the instance in the state its guest is really in."""
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if instance.task_state == task_states.DELETING:
            LOG.info('Finishing the interrupted delete of %s', instance.uuid)
            delete.terminate_or_leave_pending(mgr, context, instance)
        elif instance.vm_state == vm_states.BUILDING:
            LOG.warning('Instance %s was building when this service stopped', instance.uuid)
            cleanup(mgr, context, instance, instance.node or mgr.host)
            _error(mgr, context, instance, exception.BuildAbortException(
                instance_uuid=instance.uuid,
                reason='the compute service on %s restarted during the build' % mgr.host))
        elif instance.task_state is not None:
            power_sync.recover_instance(mgr, context, instance)
