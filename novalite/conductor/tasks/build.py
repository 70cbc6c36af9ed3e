"""Building servers in the conductor: schedule, create in a cell, cast to the host.

``schedule_and_build`` is hop 4 of the boot path; ``reschedule`` moves a build that
failed on its host to the next alternate the scheduler chose. Every way out leaves the
instance either handed to a host or in ERROR with a fault, and no allocation behind.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite import context as nl_context
from novalite import exception, objects, quota, utils
from novalite.compute import instance_actions, task_states, vm_states
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from novalite.db import engine
from novalite.objects import instance_fault
from novalite.scheduler.client import query, report

LOG = logging.getLogger(__name__)

SCHEDULE_EVENT = 'conductor_schedule_and_build_instances'
RESCHEDULE_EVENT = 'conductor_build_instances'
BUILD_EVENT = instance_actions.BUILD_EVENT


@dataclasses.dataclass
class Dependencies:
    """The conductor's clients, made on first use so tests can pass their own."""

    _query: Any = None
    _report: Any = None
    _compute: Any = None

    @property
    def query_client(self) -> Any:
        if self._query is None:
            self._query = query.SchedulerQueryClient()
        return self._query

    @property
    def reportclient(self) -> Any:
        if self._report is None:
            self._report = report.SchedulerReportClient()
        return self._report

    @property
    def compute_rpcapi(self) -> Any:
        if self._compute is None:
            self._compute = compute_rpcapi.ComputeAPI()
        return self._compute


def _scheduling_error(exc: Exception) -> Exception:
    """The error to record when scheduling itself failed, saying which part failed."""
    if isinstance(exc, messaging.MessagingTimeout):
        return exception.NoValidHost(
            reason='The scheduler did not answer within %d seconds; is novalite-scheduler '
                   'running?' % CONF.rpc_response_timeout_scheduler)
    return exc


def free_allocations(deps: Dependencies, context: Any, uuids: list[str]) -> None:
    for uuid in uuids:
        try:
            deps.reportclient.delete_allocation_for_instance(context, uuid)
        except Exception:
            LOG.exception('Could not delete the allocations of %s; the heal task will', uuid)


def schedule_and_build(deps: Dependencies, context: Any, build_requests: list,
                       request_specs: list, image: dict | None, admin_password: str | None,
                       injected_files: list, requested_networks: Any) -> None:
    uuids = [br.instance_uuid for br in build_requests]
    utils.hop('conductor.received', uuids)
    try:
        host_lists = deps.query_client.select_destinations(
            context, request_specs[0], uuids, return_objects=True, return_alternates=True)
        utils.hop('conductor.selected', uuids)
    except Exception as exc:
        error = _scheduling_error(exc)
        LOG.warning('Scheduling %s failed: %s', uuids, error)
        for build_request, spec in zip(build_requests, request_specs, strict=True):
            _bury_or_log(context, build_request, spec, error)
        return

    created: list[tuple[Any, Any, Any, list]] = []
    for build_request, spec, host_list in zip(build_requests, request_specs, host_lists,
                                              strict=True):
        selection = host_list[0]
        try:
            cell = _cell_mapping(context, selection.cell_uuid)
            instance = _create_in_cell(deps, context, build_request, cell, selection)
        except Exception as exc:
            LOG.exception('Could not create %s in its cell', build_request.instance_uuid)
            free_allocations(deps, context, [build_request.instance_uuid])
            _bury_or_log(context, build_request, spec, exc)
            continue
        if instance is not None:
            created.append((instance, spec, cell, host_list))

    if created and CONF.quota.recheck_quota:
        try:
            quota.check_deltas(context, {'instances': 0, 'cores': 0, 'ram': 0},
                               context.project_id, context.user_id)
        except exception.TooManyInstances as exc:
            for instance, _spec, cell, _hosts in created:
                with nl_context.target_cell(context, cell) as cctxt:
                    instance._context = cctxt
                    _not_handed(cctxt, instance, exc, SCHEDULE_EVENT)
            free_allocations(deps, context, [i.uuid for i, *_ in created])
            return

    for instance, spec, cell, host_list in created:
        selection = host_list[0]
        with nl_context.target_cell(context, cell) as cctxt:
            instance._context = cctxt
            try:
                utils.hop('conductor.created', instance.uuid)
                deps.compute_rpcapi.build_and_run_instance(
                    cctxt, instance=instance, host=selection.service_host, image=image,
                    request_spec=spec, filter_properties=_filter_properties(host_list),
                    admin_password=admin_password, injected_files=injected_files,
                    requested_networks=requested_networks, node=selection.nodename,
                    host_list=host_list[1:])
            except Exception as exc:
                LOG.exception('Could not hand %s to %s', instance.uuid,
                              selection.service_host)
                free_allocations(deps, context, [instance.uuid])
                _not_handed(cctxt, instance, exc, SCHEDULE_EVENT)


# Cell mappings by uuid with the time they were read: a cell's mapping (its database and
# broker) changes only through novalite-manage, and is read again after CELL_CACHE_SECONDS.
CELL_CACHE_SECONDS = 60.0
_CELLS: dict[str, tuple[float, Any]] = {}


def _cell_mapping(context: Any, cell_uuid: str) -> Any:
    cached = _CELLS.get(cell_uuid)
    now = time.monotonic()
    if cached is not None and now - cached[0] < CELL_CACHE_SECONDS:
        return cached[1]
    cell = objects.CellMapping.get_by_uuid(context, cell_uuid)
    _CELLS[cell_uuid] = (now, cell)
    return cell


def _filter_properties(host_list: list) -> dict:
    return {'retry': {'num_attempts': 1, 'hosts': [[s.service_host, s.nodename]
                                                   for s in host_list[:1]]}}


def _create_in_cell(deps: Dependencies, context: Any, build_request: Any, cell: Any,
                    selection: Any) -> Any:
    """Create the instance in ``cell`` and map it there; None if the user deleted it
    meanwhile (then nothing is left behind)."""
    instance = build_request.instance
    if not instance.availability_zone:
        instance.availability_zone = selection.availability_zone
    with nl_context.target_cell(context, cell) as cctxt, engine.cell_transaction(cctxt):
        instance._context = cctxt
        instance.create()
        # The scheduling is done: its event starts and ends here (a failure later, the
        # quota recheck or the cast, marks it Error). The host's build event starts as
        # the build is handed to it; the compute finishes it.
        objects.InstanceAction.start_with_events(
            cctxt, instance.uuid, instance_actions.CREATE,
            [(SCHEDULE_EVENT, CONF.host, 'Success'),
             (BUILD_EVENT, selection.service_host, None)])
    with engine.api_transaction():
        objects.InstanceMapping.set_cell(context, instance.uuid, cell)
        try:
            build_request.destroy()
            deleted = False
        except exception.BuildRequestNotFound:
            deleted = True
    if deleted:
        LOG.info('Instance %s was deleted while it was scheduled; cleaning up',
                 instance.uuid)
        with nl_context.target_cell(context, cell) as cctxt:
            instance._context = cctxt
            instance.destroy()
        free_allocations(deps, context, [instance.uuid])
        return None
    return instance


def set_error(context: Any, instance: Any, error: BaseException, event: str,
               host: str | None = None) -> None:
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


def _not_handed(context: Any, instance: Any, error: BaseException, event: str) -> None:
    """ERROR for a build that never reached its host: ``event`` and the build event
    started for the host both end in Error."""
    set_error(context, instance, error, event)
    message, trace = objects.InstanceActionEvent.format_error(error)
    try:
        objects.InstanceActionEvent.event_finish(context, instance.uuid, BUILD_EVENT,
                                                 exc_val=message, exc_tb=trace)
    except exception.InstanceActionNotFound:
        pass


def _bury_or_log(context: Any, build_request: Any, spec: Any, error: BaseException) -> None:
    try:
        bury_in_cell0(context, build_request, spec, error)
    except Exception:
        LOG.exception('Could not put %s in cell0 (the error was: %s)',
                      build_request.instance_uuid, error)


def bury_in_cell0(context: Any, build_request: Any, spec: Any, error: BaseException) -> None:
    """Put a server that could not be scheduled in cell0, in ERROR with its fault, so
    that it still lists and shows why."""
    cell0 = objects.CellMapping.get_by_uuid(context, objects.CellMapping.CELL0_UUID)
    instance = build_request.instance
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    with nl_context.target_cell(context, cell0) as cctxt:
        instance._context = cctxt
        instance.create()
        objects.InstanceAction.action_start(cctxt, instance.uuid, instance_actions.CREATE,
                                            want_result=False)
        objects.InstanceActionEvent.event_start(cctxt, instance.uuid, SCHEDULE_EVENT,
                                                host=CONF.host)
        set_error(cctxt, instance, error, SCHEDULE_EVENT)
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
    mapping.cell_mapping = cell0
    mapping.save()
    try:
        build_request.destroy()
    except exception.BuildRequestNotFound:
        with nl_context.target_cell(context, cell0) as cctxt:
            instance._context = cctxt
            instance.destroy()


def reschedule(deps: Dependencies, context: Any, instance: Any, host_list: list,
               image: dict | None, filter_properties: dict, admin_password: str | None,
               injected_files: list, requested_networks: Any, request_spec: Any) -> None:
    """Build on the next alternate whose allocation can still be claimed; when none is
    left, ERROR with a fault that names each host tried and why it failed.

    ``retry['failures']`` carries ``[host, reason]`` pairs from one attempt to the next:
    the compute adds its build failure, this adds the alternates Placement refused.
    """
    retry = dict(filter_properties.get('retry') or {})
    failures = _failures(retry)
    remaining = list(host_list)
    while remaining:
        selection = remaining.pop(0)
        alloc_req = jsonutils.loads(selection.allocation_request) \
            if selection.allocation_request else None
        try:
            claimed = alloc_req is not None and deps.reportclient.claim_resources(
                context, instance.uuid, alloc_req, instance.project_id, instance.user_id,
                allocation_request_version=selection.allocation_request_version)
        except exception.PlacementAPIConnectFailure as exc:
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
            host_list=remaining)
        return
    # Short words first: the fault's message keeps 255 characters, its details all.
    error = exception.MaxRetriesExceeded(
        reason='Build failed on the %d host%s tried: %s.' % (
            len(failures), '' if len(failures) == 1 else 's',
            '; '.join('%s: %s' % (host, reason) for host, reason in failures)))
    set_error(context, instance, error, RESCHEDULE_EVENT)
    free_allocations(deps, context, [instance.uuid])


def _failures(retry: dict) -> list[list[str]]:
    """The ``[host, reason]`` of every attempt so far, the compute's last one included.

    A compute that does not record its failure in ``retry['failures']`` still reports
    ``exc_reason`` for the last host tried: that is added when missing.
    """
    failures = [list(f) for f in retry.get('failures') or []]
    last = [(retry.get('hosts') or [['?']])[-1][0], retry.get('exc_reason') or 'unknown error']
    if not failures or failures[-1] != last:
        failures.append(last)
    return failures
