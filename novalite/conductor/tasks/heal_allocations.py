"""Allocations in Placement checked against the servers and migrations they are for.

What ``novalite-manage placement heal_allocations`` and ``audit`` do by hand, and what
the conductor's allocation healing periodic task does on its own. Three findings:

- **missing**: a server on a host, settled (not building, no task under way, no move in
  progress), holds nothing in Placement: its flavor is claimed again on its compute
  node's provider, for its project and user;
- **orphan**: a consumer holds resources on a compute node's provider and is neither a
  live server nor a migration (its server was deleted, or it never was one);
- **leftover**: a consumer is a migration that finished (confirmed, reverted, error...)
  more than ``LEFTOVER_GRACE`` seconds ago and still holds resources.

Several conductors may run this at once, next to builds and moves: a consumer is read
from Placement *before* novalite's records are asked about it, and every repair is a
write conditioned on the consumer generation read then. A consumer written meanwhile
(a build claiming, a move handing allocations over, another conductor's repair) is left
alone; the next run looks again. A server being scheduled has its InstanceMapping before
its claim, and a move its Migration before its allocation, so neither is taken for an
orphan.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
from collections.abc import Callable, Iterator

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import vm_states
from novalite.context import RequestContext
from novalite.scheduler import utils as scheduler_utils
from novalite.scheduler.client import report

LOG = logging.getLogger(__name__)

MISSING = 'missing'
ORPHAN = 'orphan'
LEFTOVER = 'leftover'
# Seconds a finished migration keeps its allocations before they count as leftovers:
# the flow that finished it frees or hands them over just after writing its status.
LEFTOVER_GRACE = 60

# Servers whose allocations are not healed: not on a host for good, or going away.
_UNSETTLED_VM_STATES = (vm_states.BUILDING, vm_states.SHELVED_OFFLOADED,
                        vm_states.DELETED, vm_states.SOFT_DELETED)


@dataclasses.dataclass
class Finding:
    """One consumer whose allocations do not match novalite's records.

    :ivar record: the consumer as Placement showed it before the decision (a repair
        is conditioned on its generation).
    :ivar allocations: for ``missing``, what the server should hold.
    """

    kind: str
    consumer: str
    why: str
    record: dict
    allocations: dict[str, dict] = dataclasses.field(default_factory=dict)
    project_id: str = ''
    user_id: str = ''

    @property
    def providers(self) -> list[str]:
        return sorted(self.allocations if self.kind == MISSING
                      else self.record.get('allocations') or {})


def live_cells(context: RequestContext, cell_uuid: str | None = None
               ) -> list[objects.CellMapping]:
    """The cells servers run in (not cell0), or the one named.

    :raises CellMappingNotFound: no cell ``cell_uuid``
    """
    if cell_uuid is not None:
        return [objects.CellMapping.get_by_uuid(context, cell_uuid)]
    return [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]


# -- servers without their allocation ---------------------------------------------------

def why_not_healable(cctxt: RequestContext, instance: objects.Instance) -> str | None:
    """Why ``instance``'s allocations are not for this tool to write, or None."""
    if not instance.host or not instance.node:
        return 'Instance %s is not on a host.' % instance.uuid
    if instance.vm_state in _UNSETTLED_VM_STATES:
        return 'Instance %s is %s.' % (instance.uuid, instance.vm_state)
    if instance.task_state is not None:
        return 'Instance %s is undergoing a task state transition: %s' % (
            instance.uuid, instance.task_state)
    if objects.MigrationList.get_in_progress_by_instance(cctxt, instance.uuid):
        return 'Instance %s has a migration in progress.' % instance.uuid
    return None


def _is_bfv(cctxt: RequestContext, instance_uuid: str) -> bool:
    try:
        spec = objects.RequestSpec.get_by_instance_uuid(cctxt, instance_uuid)
    except exception.RequestSpecNotFound:
        return False
    return bool(spec.is_bfv) if spec.obj_attr_is_set('is_bfv') else False


def check_instance(cctxt: RequestContext, client: report.SchedulerReportClient,
                   instance: objects.Instance, force: bool = False) -> Finding | None:
    """The finding for a settled server without allocations (or any, with ``force``);
    None when it holds some.

    :raises ComputeHostNotFound: the server's compute node is not in its cell
    """
    record = client.get_consumer(cctxt, instance.uuid)
    if record.get('allocations') and not force:
        return None
    node = objects.ComputeNode.get_by_host_and_nodename(cctxt, instance.host or '',
                                                        instance.node or '')
    resources = scheduler_utils.resources_from_flavor(
        instance.flavor, _is_bfv(cctxt, instance.uuid))
    why = ('server %s on %s holds nothing in Placement' % (instance.uuid, instance.host)
           if not record.get('allocations') else
           'server %s on %s: allocations rewritten from its flavor (--force)'
           % (instance.uuid, instance.host))
    return Finding(MISSING, instance.uuid, why, record,
                   allocations={node.uuid: {'resources': resources}},
                   project_id=instance.project_id or '', user_id=instance.user_id or '')


def heal_missing(cctxt: RequestContext, client: report.SchedulerReportClient,
                 finding: Finding) -> bool:
    """Write the allocations ``finding`` says the server lacks, if the server is still
    settled and the consumer unchanged since it was read.

    :returns: False when nothing was written (the server or its consumer moved on)
    :raises AllocationUpdateFailed: Placement refused (no room on the provider...)
    """
    try:
        instance = objects.Instance.get_by_uuid(cctxt, finding.consumer)
    except exception.InstanceNotFound:
        return False
    if why_not_healable(cctxt, instance) is not None:
        return False
    return client.put_allocations(cctxt, finding.consumer, finding.allocations,
                                  finding.project_id, finding.user_id,
                                  finding.record.get('consumer_generation'))


def settled_instances(cctxt: RequestContext) -> list[objects.Instance]:
    """The cell's live servers that are on a host, oldest first."""
    instances = objects.InstanceList.get_by_filters(cctxt, {}, sort_keys=['id'],
                                                    sort_dirs=['asc'])
    return [i for i in instances if i.host]


# -- allocations nobody owns ------------------------------------------------------------

class Consumers:
    """Who a consumer uuid is, asked of the API database and of the cells."""

    def __init__(self, context: RequestContext,
                 cells: list[objects.CellMapping] | None = None) -> None:
        self.context = context
        self.cells = live_cells(context) if cells is None else cells

    def classify(self, consumer: str) -> tuple[str | None, str]:
        """:returns: (None, what it is) for a live server or a migration under way,
            else (ORPHAN or LEFTOVER, why)."""
        try:
            mapping = objects.InstanceMapping.get_by_instance_uuid(self.context, consumer)
        except exception.InstanceMappingNotFound:
            mapping = None
        if mapping is not None:
            return self._server(consumer, mapping)
        for cell in self.cells:
            with nl_context.target_cell(self.context, cell) as cctxt:
                try:
                    migration = objects.Migration.get_by_uuid(cctxt, consumer)
                except exception.MigrationNotFound:
                    continue
            return self._migration(migration)
        return ORPHAN, 'no server nor migration has this uuid'

    def _server(self, consumer: str, mapping: objects.InstanceMapping
                ) -> tuple[str | None, str]:
        cell = mapping.cell_mapping
        if cell is None:
            return None, 'server being scheduled'
        if cell.is_cell0:
            return ORPHAN, 'its server was never scheduled (it is in cell0)'
        with nl_context.target_cell(self.context, cell) as cctxt:
            try:
                objects.Instance.get_by_uuid(cctxt, consumer)
            except exception.InstanceNotFound:
                return ORPHAN, 'its server was deleted'
        return None, 'live server'

    @staticmethod
    def _migration(migration: objects.Migration) -> tuple[str | None, str]:
        if migration.in_progress:
            return None, 'migration in progress'
        finished = migration.updated_at or migration.created_at
        if finished is not None:
            if finished.tzinfo is None:
                finished = finished.replace(tzinfo=datetime.UTC)
            age = (timeutils.utcnow(with_timezone=True) - finished).total_seconds()
            if age < LEFTOVER_GRACE:
                return None, 'migration finished %d s ago' % age
        return LEFTOVER, 'migration %s of server %s is %s' % (
            migration.uuid, migration.instance_uuid, migration.status)


def compute_node_providers(context: RequestContext, cells: list[objects.CellMapping]
                           ) -> list[str]:
    """The providers of the cells' compute nodes that Placement has."""
    nodes: set[str] = set()
    for cell in cells:
        with nl_context.target_cell(context, cell) as cctxt:
            nodes.update(n.uuid for n in objects.ComputeNodeList.get_all(cctxt))
    return sorted(nodes)


def find_unowned(context: RequestContext, client: report.SchedulerReportClient,
                 providers: list[str], consumers: Consumers,
                 seen: set[str] | None = None) -> Iterator[Finding]:
    """The orphans and leftovers holding resources on ``providers``.

    :param seen: filled with every consumer holding resources on them
    """
    seen = set() if seen is None else seen
    for rp_uuid in providers:
        for consumer in client.get_allocations_for_resource_provider(context, rp_uuid):
            if consumer in seen:
                continue
            seen.add(consumer)
            # Read before deciding: a repair is conditioned on this generation.
            record = client.get_consumer(context, consumer)
            if not record.get('allocations'):
                continue
            kind, why = consumers.classify(consumer)
            if kind is not None:
                yield Finding(kind, consumer, why, record)


def remove(context: RequestContext, client: report.SchedulerReportClient,
           finding: Finding) -> bool:
    """Free an orphan's or a leftover's allocations, unless written since they were read."""
    return client.delete_allocations_if_unchanged(context, finding.consumer, finding.record)


# -- the periodic task --------------------------------------------------------------------

def heal_all(context: RequestContext, client: report.SchedulerReportClient,
             repair: bool = True) -> list[Finding]:
    """Find (and, with ``repair``, fix) every finding; log one WARNING line each."""
    consumers = Consumers(context)
    findings: list[Finding] = []
    providers = compute_node_providers(context, consumers.cells)
    known = {rp['uuid'] for rp in client.list_resource_providers(context)}
    # Servers seen holding resources on a compute node need no second look at Placement.
    holding: set[str] = set()
    for finding in find_unowned(context, client, [p for p in providers if p in known],
                                consumers, holding):
        findings.append(finding)
        _settle(finding, repair, functools.partial(remove, context, client, finding))
    for cell in consumers.cells:
        with nl_context.target_cell(context, cell) as cctxt:
            for instance in settled_instances(cctxt):
                if instance.uuid in holding:
                    continue
                found = _check_quietly(cctxt, client, instance)
                if found is None:
                    continue
                findings.append(found)
                _settle(found, repair, functools.partial(heal_missing, cctxt, client, found))
    return findings


def _check_quietly(cctxt: RequestContext, client: report.SchedulerReportClient,
                   instance: objects.Instance) -> Finding | None:
    if why_not_healable(cctxt, instance) is not None:
        return None
    try:
        return check_instance(cctxt, client, instance)
    except exception.ComputeHostNotFound:
        LOG.warning('Allocation healing: server %s has no allocation and its compute node '
                    '%s/%s is unknown: left as it is', instance.uuid, instance.host,
                    instance.node)
    return None


_WHAT = {
    MISSING: ('created the missing allocation', 'would create the missing allocation'),
    ORPHAN: ('deleted the orphan allocation', 'would delete the orphan allocation'),
    LEFTOVER: ('deleted the leftover allocation', 'would delete the leftover allocation'),
}


def _settle(finding: Finding, repair: bool, fix: Callable[[], bool]) -> None:
    done, would = _WHAT[finding.kind]
    where = ', '.join(finding.providers)
    if not repair:
        LOG.warning('Allocation healing (report only): %s of consumer %s on provider(s) %s: '
                    '%s', would, finding.consumer, where, finding.why)
        return
    try:
        fixed = fix()
    except exception.NovaliteException as exc:
        LOG.warning('Allocation healing: could not fix consumer %s (%s): %s',
                    finding.consumer, finding.why, exc)
        return
    if fixed:
        LOG.warning('Allocation healing: %s of consumer %s on provider(s) %s: %s',
                    done, finding.consumer, where, finding.why)
    else:
        LOG.info('Allocation healing: consumer %s changed meanwhile (%s): left for the '
                 'next run', finding.consumer, finding.why)
