"""Building servers in the conductor: schedule, create in a cell, cast to the host.

``schedule_and_build`` is hop 4 of the boot path; ``reschedule`` moves a build that
failed on its host to the next alternate the scheduler chose. Every way out leaves the
instance either handed to a host or in ERROR with a fault, and no allocation behind.
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import time
from typing import Any

import cachetools
import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, metrics, objects, quota, transient
from novalite.compute import api_volumes, instance_actions, task_states, vm_states
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from novalite.db import engine
from novalite.objects import instance_fault
from novalite.objects.build_request import Ownership
from novalite.scheduler import rpcapi as scheduler_rpcapi
from novalite.scheduler.client import report
from novalite.volume import cinder

LOG = logging.getLogger(__name__)

SCHEDULE_EVENT = 'conductor_schedule_and_build_instances'
RESCHEDULE_EVENT = 'conductor_build_instances'
BUILD_EVENT = instance_actions.BUILD_EVENT

# The create's network requests, as the API resolved them (plain dicts once over RPC).
RequestedNetworks = list[dict[str, Any]]


@dataclasses.dataclass
class Dependencies:
    """The conductor's clients, made on first use so tests can pass their own."""

    _query: scheduler_rpcapi.SchedulerAPI | None = None
    _report: report.SchedulerReportClient | None = None
    _compute: compute_rpcapi.ComputeAPI | None = None
    _volume: cinder.API | None = None

    @property
    def query_client(self) -> scheduler_rpcapi.SchedulerAPI:
        """The scheduler's RPC client (Nova's name for what asks it for hosts)."""
        if self._query is None:
            self._query = scheduler_rpcapi.SchedulerAPI()
        return self._query

    @property
    def reportclient(self) -> report.SchedulerReportClient:
        if self._report is None:
            self._report = report.SchedulerReportClient()
        return self._report

    @property
    def compute_rpcapi(self) -> compute_rpcapi.ComputeAPI:
        if self._compute is None:
            self._compute = compute_rpcapi.ComputeAPI()
        return self._compute

    @property
    def volume_api(self) -> cinder.API:
        if self._volume is None:
            self._volume = cinder.API()
        return self._volume


def _scheduling_error(exc: Exception) -> Exception:
    """The error to record when scheduling itself failed, saying which part failed."""
    if isinstance(exc, messaging.MessagingTimeout):
        return exception.NoValidHost(
            reason='The scheduler did not answer within %d seconds; is novalite-scheduler '
                   'running?' % CONF.rpc_response_timeout_scheduler)
    return exc


def build_deadline() -> float:
    """The monotonic time a build started now stops retrying at (see ``transient``)."""
    return time.monotonic() + CONF.conductor.build_retry_timeout


def free_allocations(deps: Dependencies, context: nl_context.RequestContext, uuids: list[str],
                     until: float | None = None) -> None:
    """Delete the allocations of ``uuids``, retrying an unreachable Placement until
    ``until`` (a build's deadline) when given."""
    for uuid in uuids:
        try:
            if until is None:
                deps.reportclient.delete_allocation_for_instance(context, uuid)
            else:
                transient.call('Freeing the allocations of %s' % uuid, functools.partial(
                    deps.reportclient.delete_allocation_for_instance, context, uuid), until)
        except Exception as exc:
            LOG.warning('Could not delete the allocations of %s; the heal task will: %s',
                        uuid, exc)


def finish_requested_delete(deps: Dependencies, context: nl_context.RequestContext,
                            build_request: objects.BuildRequest, until: float) -> None:
    """Its user deleted a server this conductor held: free what its scheduling
    claimed, then remove it, so it answers 404 only with nothing left in Placement."""
    uuid = build_request.instance_uuid
    LOG.info('Instance %s was deleted while it was scheduled; cleaning up', uuid)
    free_allocations(deps, context, [uuid], until)
    api_volumes.unreserve(context, deps.volume_api, build_request.mappings())
    with engine.api_transaction():
        try:
            build_request.destroy()
        except exception.BuildRequestNotFound:
            pass
        try:
            mapping = objects.InstanceMapping.get_by_instance_uuid(context, uuid)
            mapping.queued_for_delete = True
            mapping.save()
        except exception.InstanceMappingNotFound:
            pass


def _let_go(deps: Dependencies, context: nl_context.RequestContext,
            build_request: objects.BuildRequest, state: Ownership, until: float) -> None:
    """This attempt no longer owns ``build_request``: finish its user's delete, or
    leave it to the attempt that does."""
    if state is Ownership.DELETE_REQUESTED:
        finish_requested_delete(deps, context, build_request, until)
    elif state is Ownership.STALE:
        LOG.warning('Build request %s was built again meanwhile (its hold expired); '
                    'leaving it to that build', build_request.instance_uuid)


def _take(deps: Dependencies, context: nl_context.RequestContext,
          build_requests: list[objects.BuildRequest], request_specs: list[objects.RequestSpec],
          until: float) -> tuple[list, list]:
    """The build requests (and their specs) this conductor now holds."""
    taken: tuple[list, list] = ([], [])
    for build_request, spec in zip(build_requests, request_specs, strict=True):
        state = transient.call('Taking build request %s' % build_request.instance_uuid,
                               build_request.take, until)
        if state is Ownership.CURRENT:
            taken[0].append(build_request)
            taken[1].append(spec)
        else:
            _let_go(deps, context, build_request, state, until)
    return taken


def schedule_and_build(deps: Dependencies, context: nl_context.RequestContext,
                       build_requests: list[objects.BuildRequest],
                       request_specs: list[objects.RequestSpec], image: dict[str, Any] | None,
                       admin_password: str | None, injected_files: list[Any],
                       requested_networks: RequestedNetworks | None) -> None:
    until = build_deadline()
    build_requests, request_specs = _take(deps, context, build_requests, request_specs,
                                          until)
    if not build_requests:
        return
    metrics.boots_started(len(build_requests))
    uuids = [br.instance_uuid for br in build_requests]

    def before_retry() -> None:
        # A scheduler that died after claiming left allocations the next claim would
        # collide with; and the hold on the build requests is renewed.
        for build_request in build_requests:
            build_request.take()
        for uuid in uuids:
            deps.reportclient.delete_allocation_for_instance(context, uuid)

    try:
        host_lists = transient.call(
            'Scheduling %s' % ', '.join(uuids), functools.partial(
                deps.query_client.select_destinations, context, request_specs[0], uuids,
                return_objects=True, return_alternates=True), until, before_retry)
    except Exception as exc:
        error = _scheduling_error(exc)
        LOG.warning('Scheduling %s failed: %s', uuids, error)
        if transient.is_transient(exc):
            # A scheduler that timed out may have claimed before it stopped answering.
            free_allocations(deps, context, uuids)
        for build_request, spec in zip(build_requests, request_specs, strict=True):
            _bury_or_log(deps, context, build_request, spec, error, until)
        return

    created: list[tuple[objects.Instance, objects.RequestSpec, objects.CellMapping,
                        list[objects.Selection], list[objects.BlockDeviceMapping]]] = []
    for build_request, spec, host_list in zip(build_requests, request_specs, host_lists,
                                              strict=True):
        selection = host_list[0]
        try:
            cell = _cell_mapping(context, selection.cell_uuid)
            made = _create_in_cell(deps, context, build_request, cell, selection, until)
        except Exception as exc:
            LOG.exception('Could not create %s in its cell', build_request.instance_uuid)
            free_allocations(deps, context, [build_request.instance_uuid], until)
            _bury_or_log(deps, context, build_request, spec, exc, until)
            continue
        if made is not None:
            created.append((made[0], spec, cell, host_list, made[1]))

    if created and CONF.quota.recheck_quota:
        try:
            quota.check_deltas(context, {'instances': 0, 'cores': 0, 'ram': 0},
                               context.project_id, context.user_id)
        except exception.TooManyInstances as exc:
            for instance, _spec, cell, _hosts, bdms in created:
                with nl_context.target_cell(context, cell) as cctxt:
                    instance._context = cctxt
                    _not_handed(cctxt, instance, exc, SCHEDULE_EVENT)
                    api_volumes.unreserve(cctxt, deps.volume_api, bdms, save=True)
            free_allocations(deps, context, [i.uuid for i, *_ in created])
            return

    for instance, spec, cell, host_list, bdms in created:
        selection = host_list[0]
        with nl_context.target_cell(context, cell) as cctxt:
            instance._context = cctxt
            try:
                deps.compute_rpcapi.build_and_run_instance(
                    cctxt, instance=instance, host=selection.service_host, image=image,
                    request_spec=spec, filter_properties=_filter_properties(host_list),
                    admin_password=admin_password, injected_files=injected_files,
                    requested_networks=requested_networks, node=selection.nodename,
                    host_list=host_list[1:], block_device_mapping=bdms)
            except Exception as exc:
                LOG.exception('Could not hand %s to %s', instance.uuid,
                              selection.service_host)
                free_allocations(deps, context, [instance.uuid], until)
                _not_handed(cctxt, instance, exc, SCHEDULE_EVENT)
                api_volumes.unreserve(cctxt, deps.volume_api, bdms, save=True)


# Cell mappings by uuid: a cell's mapping (its database and broker) changes only through
# novalite-manage, and is read again after CELL_CACHE_SECONDS.
CELL_CACHE_SECONDS = 60.0
_CELLS: cachetools.TTLCache[str, objects.CellMapping] = cachetools.TTLCache(
    maxsize=1000, ttl=CELL_CACHE_SECONDS)


@cachetools.cached(_CELLS, key=lambda context, cell_uuid: cell_uuid, lock=threading.Lock())
def _cell_mapping(context: nl_context.RequestContext, cell_uuid: str) -> objects.CellMapping:
    return objects.CellMapping.get_by_uuid(context, cell_uuid)


def _filter_properties(host_list: list[objects.Selection]) -> dict:
    return {'retry': {'num_attempts': 1, 'hosts': [[s.service_host, s.nodename]
                                                   for s in host_list[:1]]}}


class _NotOurs(Exception):
    """The build request changed hands while the instance was created in its cell."""

    def __init__(self, state: Ownership) -> None:
        super().__init__(state.value)
        self.state = state


def _create_in_cell(deps: Dependencies, context: nl_context.RequestContext,
                    build_request: objects.BuildRequest, cell: objects.CellMapping,
                    selection: objects.Selection, until: float
                    ) -> tuple[objects.Instance, list[objects.BlockDeviceMapping]] | None:
    """Create the instance (and its block device mappings) in ``cell`` and map it
    there; None if this attempt no longer owns the build (its user deleted it: then
    nothing is left behind)."""
    state = transient.call('Taking build request %s' % build_request.instance_uuid,
                           build_request.take, until)
    if state is not Ownership.CURRENT:
        _let_go(deps, context, build_request, state, until)
        return None
    instance = build_request.instance
    if not instance.availability_zone:
        instance.availability_zone = selection.availability_zone
    with nl_context.target_cell(context, cell) as cctxt:
        instance._context = cctxt
        instance, bdms = transient.call(
            'Creating %s in cell %s' % (instance.uuid, cell.name),
            functools.partial(_create_instance, cctxt, instance, selection,
                              build_request.mappings()), until)
    try:
        transient.call('Mapping %s to cell %s' % (instance.uuid, cell.name),
                       functools.partial(_map, context, build_request, cell), until)
    except _NotOurs as exc:
        if exc.state is Ownership.DELETE_REQUESTED:
            with nl_context.target_cell(context, cell) as cctxt:
                instance._context = cctxt
                instance.destroy()
        # A stale attempt leaves the row: the current one adopts it.
        _let_go(deps, context, build_request, exc.state, until)
        return None
    return instance, bdms


def _create_instance(cctxt: nl_context.RequestContext, instance: objects.Instance,
                     selection: objects.Selection,
                     mappings: list[objects.BlockDeviceMapping]
                     ) -> tuple[objects.Instance, list[objects.BlockDeviceMapping]]:
    """Create the instance's row and its mappings, or adopt the ones an earlier
    attempt of this build created before its conductor died (not yet mapped, never
    handed to a host)."""
    try:
        existing = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    except exception.InstanceNotFound:
        existing = None
    if existing is not None:
        if existing.vm_state != vm_states.BUILDING or existing.host:
            raise exception.InstanceExists(name=instance.uuid)
        LOG.info('Instance %s was created in its cell by an earlier attempt of its '
                 'build; adopting it', instance.uuid)
        return existing, list(objects.BlockDeviceMappingList.get_by_instance_uuid(
            cctxt, instance.uuid)) if mappings else []
    # The row is written now: the lost-build check measures how long it has waited for
    # a host from here, not from the API's create.
    instance.updated_at = timeutils.utcnow(with_timezone=True)
    bdms = [objects.BlockDeviceMapping.from_request(cctxt, m.to_request()) for m in mappings]
    with engine.cell_transaction(cctxt):
        instance.create()
        for bdm in bdms:
            bdm.create()
        # The scheduling is done: its event starts and ends here (a failure later, the
        # quota recheck or the cast, marks it Error). The host's build event starts as
        # the build is handed to it; the compute finishes it.
        objects.InstanceAction.start_with_events(
            cctxt, instance.uuid, instance_actions.CREATE,
            [(SCHEDULE_EVENT, CONF.host, 'Success'),
             (BUILD_EVENT, selection.service_host, None)])
    return instance, bdms


def _map(context: nl_context.RequestContext, build_request: objects.BuildRequest,
         cell: objects.CellMapping) -> None:
    """Point the mapping at ``cell`` and remove the build request, together, if this
    attempt still owns it; else change nothing and raise :class:`_NotOurs`."""
    with engine.api_transaction():
        objects.InstanceMapping.set_cell(context, build_request.instance_uuid, cell)
        state = build_request.destroy_if_current()
        if state is not Ownership.CURRENT:
            raise _NotOurs(state)


def set_error(context: nl_context.RequestContext, instance: objects.Instance, error: BaseException,
              event: str, host: str | None = None) -> None:
    """ERROR state, a fault that says why, and the action's event marked failed."""
    # The fault first: a client that sees ERROR looks for it at once.
    instance_fault.add_instance_fault_from_exc(context, instance, error, host=host)
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    instance.save()
    message, trace = objects.InstanceActionEvent.format_error(error)
    try:
        objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                 exc_val=message, exc_tb=trace, host=host)
    except exception.InstanceActionNotFound:
        LOG.warning('No action recorded for %s to mark failed', instance.uuid)


def _not_handed(context: nl_context.RequestContext, instance: objects.Instance,
                error: BaseException, event: str) -> None:
    """ERROR for a build that never reached its host: ``event`` and the build event
    started for the host both end in Error."""
    set_error(context, instance, error, event)
    metrics.boot_error(error)
    message, trace = objects.InstanceActionEvent.format_error(error)
    try:
        objects.InstanceActionEvent.event_finish(context, instance.uuid, BUILD_EVENT,
                                                 exc_val=message, exc_tb=trace)
    except exception.InstanceActionNotFound:
        pass


def _bury_or_log(deps: Dependencies, context: nl_context.RequestContext,
                 build_request: objects.BuildRequest, spec: objects.RequestSpec | None,
                 error: BaseException, until: float) -> None:
    try:
        state = transient.call('Taking build request %s' % build_request.instance_uuid,
                               build_request.take, until)
        if state is not Ownership.CURRENT:
            _let_go(deps, context, build_request, state, until)
            return
        # The server will not be built: the volumes reserved for it are let go (their
        # mappings go to cell0 with it, and its delete deletes what it must).
        api_volumes.unreserve(context, deps.volume_api, build_request.mappings())
        transient.call('Putting %s in cell0' % build_request.instance_uuid,
                       functools.partial(bury_in_cell0, context, build_request, spec, error),
                       until)
    except Exception:
        LOG.exception('Could not put %s in cell0 (the error was: %s)',
                      build_request.instance_uuid, error)


def bury_in_cell0(context: nl_context.RequestContext, build_request: objects.BuildRequest,
                  spec: objects.RequestSpec | None, error: BaseException) -> None:
    """Put a server that could not be scheduled in cell0, in ERROR with its fault, so
    that it still lists and shows why."""
    cell0 = objects.CellMapping.get_by_uuid(context, objects.CellMapping.CELL0_UUID)
    instance = build_request.instance
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    with nl_context.target_cell(context, cell0) as cctxt:
        instance._context = cctxt
        try:
            # What an earlier try left (its answer lost) is finished, not made twice.
            instance = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        except exception.InstanceNotFound:
            instance.create()
            for bdm in build_request.mappings():
                objects.BlockDeviceMapping.from_request(
                    cctxt, dict(bdm.to_request(), attachment_id=None)).create()
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.CREATE, want_result=False)
            objects.InstanceActionEvent.event_start(cctxt, instance.uuid, SCHEDULE_EVENT,
                                                    host=CONF.host)
            set_error(cctxt, instance, error, SCHEDULE_EVENT)
            metrics.boot_error(error)
    try:
        _map(context, build_request, cell0)
    except _NotOurs as exc:
        with nl_context.target_cell(context, cell0) as cctxt:
            instance._context = cctxt
            instance.destroy()
        if exc.state is Ownership.DELETE_REQUESTED:
            with engine.api_transaction():
                try:
                    build_request.destroy()
                except exception.BuildRequestNotFound:
                    pass
                mapping = objects.InstanceMapping.get_by_instance_uuid(context,
                                                                       instance.uuid)
                mapping.queued_for_delete = True
                mapping.save()


def reschedule(deps: Dependencies, context: nl_context.RequestContext, instance: objects.Instance,
               host_list: list[objects.Selection], image: dict[str, Any] | None,
               filter_properties: dict[str, Any], admin_password: str | None,
               injected_files: list[Any], requested_networks: RequestedNetworks | None,
               request_spec: objects.RequestSpec | None,
               block_device_mapping: list[objects.BlockDeviceMapping] | None = None) -> None:
    """Build on the next alternate whose allocation can still be claimed; when none is
    left, ERROR with a fault that names each host tried and why it failed.

    ``block_device_mapping``: the mappings the failed build had (None: read them, as
    for a build re-driven without them).

    ``retry['failures']`` carries ``[host, reason]`` pairs from one attempt to the next:
    the compute adds its build failure, this adds the alternates Placement refused.
    """
    retry = dict(filter_properties.get('retry') or {})
    failures = _failures(retry)
    remaining = list(host_list)
    until = build_deadline()
    if retry.get('redrive') and not remaining and \
            retry.get('num_attempts', 1) < CONF.scheduler.max_attempts:
        # A build re-driven after its host restarted or its message was lost comes
        # without alternates: choose again. (A build that failed on its host and has no
        # alternates left ends here, as Nova's: its hosts had their chance.)
        request_spec = request_spec or objects.RequestSpec.get_by_instance_uuid(
            context, instance.uuid)
        image = image if image is not None else _image_of(request_spec)
        if requested_networks is None:
            requested_networks = requested_networks_of(request_spec)
        remaining = _schedule_again(deps, context, instance, request_spec, failures)
    if block_device_mapping is None and remaining:
        block_device_mapping = list(objects.BlockDeviceMappingList.get_by_instance_uuid(
            context, instance.uuid))
    # The scheduler claimed its first choice itself; alternates are claimed here.
    scheduled = bool(remaining) and not host_list
    while remaining:
        selection = remaining.pop(0)
        alloc_req = jsonutils.loads(selection.allocation_request) \
            if selection.allocation_request else None
        assert instance.project_id is not None and instance.user_id is not None, \
            'an instance has an owner'
        try:
            claimed = scheduled or (alloc_req is not None and transient.call(
                'Claiming %s on %s' % (instance.uuid, selection.service_host),
                functools.partial(
                    deps.reportclient.claim_resources, context, instance.uuid, alloc_req,
                    instance.project_id, instance.user_id,
                    allocation_request_version=selection.allocation_request_version),
                until))
            scheduled = False
        except (exception.PlacementAPIConnectFailure, exception.PlacementAPIServerError) as exc:
            failures.append([selection.service_host, 'its resources could not be claimed: '
                             + exc.format_message()])
            break
        if not claimed:
            failures.append([selection.service_host,
                             'Placement refused the claim of its resources (the host '
                             'filled up meanwhile)' if alloc_req is not None else
                             'the scheduler gave no allocation request for it'])
            continue
        retry['num_attempts'] = retry.get('num_attempts', 1) + 1
        retry['hosts'] = list(retry.get('hosts') or []) + [[selection.service_host,
                                                            selection.nodename]]
        retry['failures'] = failures
        instance.task_state = task_states.SCHEDULING
        instance.host = None
        instance.node = None
        instance.save()
        LOG.info('Rescheduling %s to %s after: %s', instance.uuid, selection.service_host,
                 '; '.join('%s: %s' % tuple(f) for f in failures))
        try:
            objects.InstanceActionEvent.event_start(context, instance.uuid, BUILD_EVENT,
                                                    host=selection.service_host)
        except exception.InstanceActionNotFound:
            LOG.warning('No action recorded for %s to add its build on %s to',
                        instance.uuid, selection.service_host)
        deps.compute_rpcapi.build_and_run_instance(
            context, instance=instance, host=selection.service_host, image=image,
            request_spec=request_spec, filter_properties=dict(filter_properties, retry=retry),
            admin_password=admin_password, injected_files=injected_files,
            requested_networks=requested_networks, node=selection.nodename,
            host_list=remaining, block_device_mapping=block_device_mapping or [])
        return
    # Short words first: the fault's message keeps 255 characters, its details all.
    error = exception.MaxRetriesExceeded(
        reason='Build failed on the %d host%s tried: %s.' % (
            len(failures), '' if len(failures) == 1 else 's',
            '; '.join('%s: %s' % (host, reason) for host, reason in failures)))
    # The reservations the failed hosts kept for it are let go (before ERROR shows: a
    # client that sees ERROR finds the volumes free): it will not be built.
    bdms = block_device_mapping if block_device_mapping is not None else list(
        objects.BlockDeviceMappingList.get_by_instance_uuid(context, instance.uuid))
    api_volumes.unreserve(context, deps.volume_api, bdms, save=True)
    set_error(context, instance, error, RESCHEDULE_EVENT)
    metrics.boot_error(error)
    free_allocations(deps, context, [instance.uuid])


def requested_networks_of(request_spec: objects.RequestSpec) -> list[dict]:
    """The create's network requests the spec kept (none in a spec older than 1.2)."""
    if not request_spec.obj_attr_is_set('requested_networks'):
        return []
    return [dict(r) for r in request_spec.requested_networks]


def _image_of(request_spec: objects.RequestSpec) -> dict | None:
    image = request_spec.image if request_spec.obj_attr_is_set('image') else None
    return image.to_dict() if image is not None else None


def _schedule_again(deps: Dependencies, context: nl_context.RequestContext,
                    instance: objects.Instance, request_spec: objects.RequestSpec,
                    failures: list[list[str]]) -> list:
    """New selections for ``instance``, leaving out the hosts its build failed on (not
    the one this re-drive comes from: that host did not fail the build, it lost it); []
    when none is left (the failures then say why)."""
    tried = [host for host, _reason in failures[:-1]]
    request_spec.ignore_hosts = sorted(set(tried))
    uuid = instance.uuid
    try:
        # Whatever the lost build still held would collide with the new claim.
        return transient.call(
            'Scheduling %s again' % uuid, functools.partial(
                _select_one, deps, context, request_spec, uuid),
            build_deadline())[0]
    except exception.NoValidHost as exc:
        failures.append(['(scheduler)', exc.format_message()])
    except Exception as exc:
        failures.append(['(scheduler)', _scheduling_error(exc).__str__()])
    return []


def _select_one(deps: Dependencies, context: nl_context.RequestContext,
                request_spec: objects.RequestSpec, uuid: str) -> list:
    deps.reportclient.delete_allocation_for_instance(context, uuid)
    return deps.query_client.select_destinations(context, request_spec, [uuid],
                                                 return_objects=True,
                                                 return_alternates=True)


def _failures(retry: dict[str, Any]) -> list[list[str]]:
    """The ``[host, reason]`` of every attempt so far, the compute's last one included.

    A compute that does not record its failure in ``retry['failures']`` still reports
    ``exc_reason`` for the last host tried: that is added when missing.
    """
    failures = [list(f) for f in retry.get('failures') or []]
    last = [(retry.get('hosts') or [['?']])[-1][0], retry.get('exc_reason') or 'unknown error']
    if not failures or failures[-1] != last:
        failures.append(last)
    return failures
