"""Building an instance on this host (hops 7 to 9 of the boot path).

Called by the compute manager with the instance lock held. A build that fails here
goes back to the conductor, which tries the next alternate host or puts the instance
in ERROR with a fault naming the failure; the allocation never outlives the build. A
build this service was running when it stopped is cleaned up at start-up and handed
back to the conductor to be scheduled again. Deletes are in ``compute/delete.py``.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from novalite import exception, metrics, notifications, objects
from novalite.compute import (
    block_devices,
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

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext
    from novalite.network.requests import NetworkRequest
    from novalite.virt import driver as virt_driver

LOG = logging.getLogger(__name__)

BUILD_EVENT = instance_actions.BUILD_EVENT
# The task states of a build on its host (the claim's save leaves SCHEDULING).
BUILD_TASK_STATES = [task_states.SCHEDULING, task_states.NETWORKING,
                     task_states.BLOCK_DEVICE_MAPPING, task_states.SPAWNING]
# System metadata keys (one per request, numbered) in which the claim records the
# build's network requests: a build re-driven after this service restarted asks for
# the same networks and ports, and the user's ports are kept when its own are released.
NETWORK_REQUEST_KEY = 'network_request_%d'


@dataclasses.dataclass
class BuildRequestArgs:
    """What the conductor sent along with the instance."""

    image: dict[str, Any] | None
    request_spec: objects.RequestSpec | None
    filter_properties: dict
    admin_password: str | None
    injected_files: list
    requested_networks: list[NetworkRequest] | None
    node: str
    host_list: list[objects.Selection]
    # The server's block device mappings (its volumes); none for a plain image boot.
    block_device_mapping: list[objects.BlockDeviceMapping] = dataclasses.field(
        default_factory=list)


class _Deleted(Exception):
    """The instance was deleted while it was being built."""


class _TakenOver(Exception):
    """Another build of the instance owns it now (the conductor re-drove a build it
    thought lost): this one leaves without touching what that build holds."""


def _lost_the_instance(exc: Exception) -> Exception:
    """What a save or claim refused because the instance changed meanwhile means."""
    if isinstance(exc, exception.InstanceNotFound) or 'deleting' in str(exc):
        return _Deleted()
    return _TakenOver()


def build_and_run_instance(mgr: ComputeManager, context: RequestContext,
                           instance: objects.Instance, req: BuildRequestArgs) -> None:
    # The conductor started BUILD_EVENT when it handed the build to this host (one round
    # trip less per build); the save that makes the instance ACTIVE finishes it (another).
    notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                               notifications.START)
    try:
        _build(mgr, context, instance, req)
    except _Deleted:
        LOG.info('Instance %s was deleted during its build; cleaning up', instance.uuid)
        cleanup(mgr, context, instance, req.node, bdms=req.block_device_mapping)
        return
    except _TakenOver:
        # The allocation, ports and record are the other build's now: only what this
        # host made goes (ports it made are the port audit's).
        LOG.warning('Another build of %s took it over; leaving it to that build',
                    instance.uuid)
        try:
            mgr.driver.destroy(context, instance, network_info=[])
        except Exception:
            LOG.exception('Could not destroy the guest of %s', instance.uuid)
        mgr.rt.abort_instance_claim(context, instance, req.node)
        return
    except Exception as exc:
        _finish_build_event(mgr, context, instance, exc)
        # A build that goes to another host keeps the user's volumes reserved for it.
        cleanup(mgr, context, instance, req.node, bdms=req.block_device_mapping,
                keep_reserved=not isinstance(exc, exception.BuildAbortException))
        mgr.rt.build_failed(context, req.node)
        notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                                   notifications.ERROR, exception=exc)
        if isinstance(exc, exception.BuildAbortException):
            _error(mgr, context, instance, exc)
        else:
            _reschedule(mgr, context, instance, req, exc)
        return
    mgr.rt.build_succeeded(context, req.node)
    metrics.boot_active(instance.created_at, instance.launched_at)
    notifications.notify_about_instance_action(context, instance, mgr.host, 'create',
                                               notifications.END)


def _finish_build_event(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                        exc: Exception | str) -> None:
    """Mark this host's build event failed; the record of the action is not worth
    leaving the build unfinished for (the database may be failing too)."""
    message, trace = (exc, None) if isinstance(exc, str) else \
        objects.InstanceActionEvent.format_error(exc)
    try:
        delete.retried(lambda: objects.InstanceActionEvent.event_finish(
            context, instance.uuid, BUILD_EVENT, exc_val=message, exc_tb=trace,
            host=mgr.host), 'Finishing the build event of %s' % instance.uuid)
    except Exception as error:
        LOG.warning('Could not mark the build event of %s failed: %s', instance.uuid,
                    error)


def _save(instance: objects.Instance, expected_task_state: str | list[str | None] | None,
          finish_event: str | None = None) -> None:
    try:
        instance.save(expected_task_state=expected_task_state, finish_event=finish_event)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as exc:
        raise _lost_the_instance(exc) from exc


def _build(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
           req: BuildRequestArgs) -> None:
    """Claim, network, spawn, ACTIVE.

    The task states are Nova's (networking, block_device_mapping, spawning), but a step
    with nothing to do is not written: without ports to allocate or volumes to attach
    the claim's save goes straight to spawning. Each save is a round trip to the
    conductor. Ports are allocated in the background from the claim on, and written to
    the instance's cache with the save that makes it ACTIVE; volumes are made and
    attached meanwhile (``compute/block_devices.py``).
    """
    requests = req.requested_networks if isinstance(req.requested_networks, list) else []
    has_ports = bool(requests)
    has_volumes = bool(block_devices.volume_mappings(req.block_device_mapping))
    instance.vm_state = vm_states.BUILDING
    instance.task_state = task_states.NETWORKING if has_ports else \
        task_states.BLOCK_DEVICE_MAPPING if has_volumes else task_states.SPAWNING
    if has_ports:
        _record_network_requests(instance, requests)
    try:
        mgr.rt.instance_claim(context, instance, req.node,
                              expected_task_state=task_states.SCHEDULING)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as exc:
        raise _lost_the_instance(exc) from exc
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
    LOG.info('Instance %s is active on %s', instance.uuid, mgr.host)


def _spawn(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
           req: BuildRequestArgs, network_info: AsyncNetworkInfo | None) -> None:
    state = instance.task_state
    bdi = None
    if block_devices.volume_mappings(req.block_device_mapping):
        if state != task_states.BLOCK_DEVICE_MAPPING:
            instance.task_state = task_states.BLOCK_DEVICE_MAPPING
            _save(instance, state)
            state = task_states.BLOCK_DEVICE_MAPPING
        bdi = _connect_volumes(mgr, context, instance, req.block_device_mapping)
    if state != task_states.SPAWNING:
        instance.task_state = task_states.SPAWNING
        _save(instance, state)
    allocations = (mgr.reportclient.get_allocations_for_consumer(context, instance.uuid)
                   if mgr.driver.spawn_uses_allocations else {})
    image_meta = objects.ImageMeta.from_dict(req.image) if req.image else None
    mgr.driver.spawn(context, instance, image_meta, req.injected_files, req.admin_password,
                     allocations, network_info=network_info if network_info is not None
                     else [], block_device_info=bdi)
    if network_info is not None:
        # The ports and ACTIVE in one write.
        instance.info_cache.network_info = network_info.wait()
    instance.power_state = mgr.driver.get_info(instance).state
    instance.vm_state = vm_states.ACTIVE
    instance.task_state = None
    instance.launched_at = timeutils.utcnow(with_timezone=True)
    # ACTIVE, and the build event finished, in one round trip to the conductor.
    _save(instance, task_states.SPAWNING, finish_event=BUILD_EVENT)


def _connect_volumes(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                     bdms: list[objects.BlockDeviceMapping]) -> virt_driver.BlockDeviceInfo | None:
    """The server's volumes made and attached to this host. Cinder failing is not
    tried on another host (as Nova: the volume service is the same everywhere)."""
    try:
        return block_devices.connect_for_spawn(mgr, context, instance, bdms)
    except (exception.CinderConnectionFailed, exception.VolumeNotCreated) as exc:
        raise exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='Failure prepping block device with the volume service (Cinder), not '
                   'rescheduling: %s' % exc.format_message()) from exc
    except (exception.VolumeError, exception.InvalidVolume, exception.InvalidInput,
            exception.VolumeNotFound, exception.VolumeOverQuota,
            exception.SnapshotNotFound) as exc:
        raise exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='Failure prepping block device: %s' % exc.format_message()) from exc


def _allocate_network(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                      req: BuildRequestArgs) -> model.NetworkInfo:
    """The instance's ports, bound to this host. A binding this host cannot have is
    tried on another host; Neutron failing is not (as Nova: "not rescheduling")."""
    spec = req.request_spec
    groups = list(spec.security_groups) if spec is not None and spec.obj_attr_is_set(
        'security_groups') else []
    try:
        return mgr.network_api.allocate_for_instance(context, instance,
                                                     req.requested_networks or [], mgr.host,
                                                     security_groups=groups)
    except (exception.NeutronConnectionFailed, neutron_client.NeutronError,
            exception.SecurityGroupNotFound) as exc:
        raise exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='Failed to allocate the network(s) with Neutron, not rescheduling: %s'
            % exc.format_message()) from exc


def _record_network_requests(instance: objects.Instance,
                             requests: list[NetworkRequest]) -> None:
    """Keep the network requests on the instance (written with the claim's save):
    nothing else keeps them once the build is handed to this host."""
    sysmeta = {k: v for k, v in instance.system_metadata.items()
               if not k.startswith('network_request_')}
    for index, request in enumerate(requests):
        sysmeta[NETWORK_REQUEST_KEY % index] = jsonutils.dumps(
            {k: v for k, v in request.items() if v is not None}, separators=(',', ':'))
    instance.system_metadata = sysmeta


def recorded_network_requests(instance: objects.Instance) -> list[NetworkRequest]:
    """The network requests the claim recorded; none for a build without ports."""
    sysmeta = instance.system_metadata if instance.obj_attr_is_set('system_metadata') \
        else {}
    requests = []
    index = 0
    while (recorded := sysmeta.get(NETWORK_REQUEST_KEY % index)) is not None:
        requests.append(jsonutils.loads(recorded))
        index += 1
    return requests


def cleanup(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, nodename: str,
            preserve: list[str] | None = None, keep_ports: bool = False,
            bdms: list[objects.BlockDeviceMapping] | None = None,
            keep_reserved: bool = False) -> None:
    """Remove what a failed or abandoned build left on this host, in Cinder and in
    Placement (``preserve``: ports the user passed in, unbound and kept;
    ``keep_ports``: every port stays the server's, only unbound from this host, as for
    a failed unshelve; ``bdms``: the build's volume mappings, let go of)."""
    network_info = delete.cached_network_info(instance)
    try:
        mgr.driver.destroy(context, instance, network_info=network_info,
                           block_device_info=block_devices.block_device_info(bdms))
    except Exception:
        LOG.exception('Could not destroy the guest of %s', instance.uuid)
    block_devices.release_after_failed_build(mgr, context, instance, bdms, keep_reserved)
    if keep_ports:
        try:
            mgr.network_api.unbind_ports(context, instance, network_info)
        except Exception as exc:
            LOG.warning('Could not unbind the ports of %s from %s: %s', instance.uuid,
                        mgr.host, exc)
    else:
        delete.release_ports(mgr, context, instance, preserve=preserve)
    mgr.rt.abort_instance_claim(context, instance, nodename)
    try:
        delete.free_allocation(mgr, context, instance.uuid)
    except Exception as exc:
        # A delete waiting for this build frees it again before the record goes; an
        # instance already gone has it removed by the resource tracker's next run.
        LOG.warning('Could not delete the allocations of %s: %s', instance.uuid, exc)


def _error(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
           exc: BaseException) -> None:
    # The fault first: a client that sees ERROR looks for it at once.
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=mgr.host)
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    # As Nova: a build that failed here is no host's (its claim and allocation are
    # gone), so a delete is local and allocation healing does not claim for it again.
    instance.host = None
    instance.node = None
    try:
        instance.save()
    except exception.InstanceNotFound:
        return
    metrics.boot_error(exc)


def _reschedule(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                req: BuildRequestArgs, exc: BaseException) -> None:
    """Hand the build back to the conductor with the remaining alternates."""
    reason = exc.format_message() if isinstance(exc, exception.NovaliteException) else \
        '%s: %s' % (type(exc).__name__, exc)
    LOG.warning('Build of %s failed on %s: %s', instance.uuid, mgr.host, reason)
    if not _hand_back(instance):
        return
    retry = dict(req.filter_properties.get('retry') or {})
    retry['exc_reason'] = reason
    retry['failures'] = list(retry.get('failures') or []) + [[mgr.host, reason]]
    retry.setdefault('hosts', [[mgr.host, req.node]])
    mgr.compute_task_api.build_instances(
        context, instances=[instance], image=req.image,
        filter_properties=dict(req.filter_properties, retry=retry),
        admin_password=req.admin_password, injected_files=req.injected_files,
        requested_networks=req.requested_networks,
        block_device_mapping=req.block_device_mapping,
        request_spec=req.request_spec, host_lists=[req.host_list])


def _hand_back(instance: objects.Instance) -> bool:
    """Save the instance as no host's (SCHEDULING), unless a delete came meanwhile
    (that delete finishes it). :returns: whether it was saved."""
    instance.task_state = task_states.SCHEDULING
    instance.host = None
    instance.node = None
    try:
        delete.retried(lambda: instance.save(expected_task_state=BUILD_TASK_STATES),
                       'Handing %s back to the conductor' % instance.uuid)
    except (exception.InstanceNotFound, exception.UnexpectedTaskStateError) as error:
        LOG.info('Not scheduling %s again: %s', instance.uuid, error)
        return False
    return True


def fail_stale_builds(mgr: ComputeManager, context: RequestContext, timeout: int) -> None:
    now = timeutils.utcnow(with_timezone=True)
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if instance.vm_state != vm_states.BUILDING or instance.created_at is None or \
                instance.task_state == task_states.DELETING:
            continue  # not a build; or a delete, which the pending delete task ends
        if (now - instance.created_at).total_seconds() < timeout:
            continue
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue  # a build is still running; it ends on its own
        try:
            LOG.warning('Build of %s timed out after %ds', instance.uuid, timeout)
            cleanup(mgr, context, instance, instance.node or mgr.host,
                    preserve=_user_ports(recorded_network_requests(instance)),
                    bdms=list(objects.BlockDeviceMappingList.get_by_instance_uuid(
                        context, instance.uuid)))
            _error(mgr, context, instance, exception.BuildAbortException(
                instance_uuid=instance.uuid,
                reason='the build did not finish within %d seconds' % timeout))
        finally:
            lock.release()


def _user_ports(requests: list[NetworkRequest]) -> list[str]:
    return [port for r in requests if (port := r.get('port_id'))]


def recover_interrupted_builds(mgr: ComputeManager, context: RequestContext) -> None:
    """On start-up: a build this host was doing when it stopped cannot resume here; it
    is cleaned up and scheduled again. Deletes that were under way are finished; any
    other operation ends with the instance in the state its guest is really in."""
    reason = 'the compute service on %s restarted during the build' % mgr.host
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        with mgr.instance_lock(instance.uuid):
            try:
                _recover(mgr, context, instance, reason)
            except Exception:
                # The others are recovered all the same; a build left BUILDING here
                # is re-driven by the orphaned build check, a delete by the pending
                # delete task.
                LOG.exception('Could not recover instance %s', instance.uuid)


def _recover(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
             reason: str) -> None:
    if instance.task_state == task_states.DELETING:
        LOG.info('Finishing the interrupted delete of %s', instance.uuid)
        delete.terminate_or_leave_pending(mgr, context, instance)
    elif instance.vm_state == vm_states.BUILDING:
        LOG.warning('Instance %s was building when this service stopped: scheduling it '
                    'again', instance.uuid)
        redrive_interrupted_build(mgr, context, instance, reason)
    elif instance.task_state is not None:
        power_sync.recover_instance(mgr, context, instance)


def redrive_orphaned_builds(mgr: ComputeManager, context: RequestContext) -> list[str]:
    """Schedule again the builds claimed by this host that no build works on any more
    (its work ended without handing the instance on, e.g. the database failed under
    it): BUILDING here with the instance lock free. A build holds the lock from before
    its claim until it has handed the instance on, so a free lock with the instance
    still BUILDING here, read again under that lock, means nobody is working on it.

    :returns: the uuids of the builds re-driven
    """
    redriven = []
    for listed in objects.InstanceList.get_by_host(context, mgr.host):
        if listed.vm_state != vm_states.BUILDING or \
                listed.task_state == task_states.DELETING:
            continue
        lock = mgr.instance_lock(listed.uuid)
        if not lock.acquire(blocking=False):
            continue  # its build is running
        try:
            instance = objects.Instance.get_by_uuid(context, listed.uuid)
            if instance.vm_state != vm_states.BUILDING or instance.host != mgr.host or \
                    instance.task_state == task_states.DELETING:
                continue  # it finished meanwhile
            LOG.warning('The build of %s on %s stopped without finishing: scheduling it '
                        'again', instance.uuid, mgr.host)
            redrive_interrupted_build(
                mgr, context, instance,
                'the build on %s stopped without finishing' % mgr.host)
            redriven.append(instance.uuid)
        except exception.InstanceNotFound:
            pass
        except Exception as exc:
            LOG.warning('Could not schedule the orphaned build of %s again, next run '
                        'tries again: %s', listed.uuid, exc)
        finally:
            lock.release()
    return redriven


def redrive_interrupted_build(mgr: ComputeManager, context: RequestContext,
                              instance: objects.Instance, reason: str) -> None:
    """Remove what the interrupted build left here (guest, the ports it made, the claim
    and its allocation) and hand the instance back to the conductor to be scheduled
    again from its RequestSpec, as a build that failed here is.

    What the build was sent and nothing here kept is not sent again: the conductor
    reads the RequestSpec by the instance's uuid, and the image and network requests
    from it; the admin password and injected files are lost. The network requests the
    claim recorded are sent (they tell the user's ports, kept, from the build's own,
    deleted). If the conductor cannot be reached the instance goes to ERROR with a
    fault, never left BUILDING.
    """
    node = instance.node or mgr.host
    requests = recorded_network_requests(instance)
    cleanup(mgr, context, instance, node, preserve=_user_ports(requests),
            bdms=list(objects.BlockDeviceMappingList.get_by_instance_uuid(context,
                                                                          instance.uuid)))
    _finish_build_event(mgr, context, instance, reason)
    if not _hand_back(instance):
        return
    # The attempts made before this one are not known here any more: this one counts
    # as the first. ``redrive``: this host lost the build, it did not fail it, so the
    # scheduler may choose it again.
    retry = {'num_attempts': 1, 'hosts': [[mgr.host, node]], 'redrive': True,
             'failures': [[mgr.host, reason]], 'exc_reason': reason}
    try:
        # No host list: the conductor schedules again from the RequestSpec (which it
        # reads by the instance's uuid, with the image and, when none are given here,
        # the network requests) while [scheduler] max_attempts allows, else ERROR with
        # a fault naming each attempt.
        delete.retried(lambda: mgr.compute_task_api.build_instances(
            context, instances=[instance], image=None, filter_properties={'retry': retry},
            admin_password=None, injected_files=[], requested_networks=requests or None,
            block_device_mapping=[], request_spec=None, host_lists=[[]]),
            'Handing %s back to the conductor' % instance.uuid)
    except Exception as exc:
        LOG.warning('Could not hand %s back to the conductor: %s', instance.uuid, exc)
        _error(mgr, context, instance, exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='%s, and it could not be scheduled again: %s' % (reason, exc)))
