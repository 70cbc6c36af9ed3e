"""HostState (what the scheduler knows of one compute node) and the HostManager."""
from __future__ import annotations

import functools
import math
import threading
import types
from typing import TYPE_CHECKING, Any, TypeAlias

import cachetools
from oslo_log import log as logging
from oslo_serialization import jsonutils
from sqlalchemy import bindparam, case, func, select

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.main import models as main_models
from novalite.scheduler import filters, weights

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, Row

    from novalite.context import RequestContext

    # What a host's numbers are read from: a row of _cell_hosts, or the object.
    NodeRecord: TypeAlias = objects.ComputeNode | types.SimpleNamespace

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = 'novalite-compute'
# Seconds to wait for one cell's database when gathering host states.
CELL_TIMEOUT = 60
# Task states that load a host's disks and network, as Nova counts them.
IO_TASK_STATES = frozenset(('resize_migrating', 'rebuilding', 'resize_prep',
                            'image_snapshot', 'image_backup', 'rescuing', 'unshelving'))
# Seconds the scheduler keeps the cell mappings and the aggregates it read. Aggregates
# are also forgotten at once when the API says they changed (a fanout cast, as in Nova);
# this bounds how long a lost cast or a cell added with novalite-manage goes unseen.
CACHE_SECONDS = 60.0


class HostState:
    """Free resources and the service of one compute node, during one request.

    Built from the ComputeNode record, then refreshed from Placement's provider
    summary, which is newer: the resource tracker writes the record only periodically,
    while Placement sees every claim at once. Instance counts come from the cell's
    instances and the zone from the host's aggregates, each read once per request for
    all hosts.
    """

    def __init__(self, host: str, nodename: str, cell_uuid: str | None) -> None:
        self.host = host
        self.nodename = nodename
        self.cell_uuid = cell_uuid
        self.uuid: str | None = None
        self.total_usable_ram_mb = 0
        self.free_ram_mb = 0
        self.total_usable_disk_gb = 0
        self.free_disk_mb = 0
        self.vcpus_total = 0
        self.vcpus_used = 0
        self.cpu_allocation_ratio = 1.0
        self.hypervisor_type: str | None = None
        self.hypervisor_version: int | None = None
        self.hypervisor_hostname: str | None = None
        # [arch, hypervisor type, vm mode] triples the hypervisor can run.
        self.supported_instances: list[list[str]] = []
        self.stats: dict[str, str] = {}
        self.failed_builds = 0
        self.num_instances = 0
        # Instances in an I/O-heavy task (building, resizing, snapshotting...).
        self.num_io_ops = 0
        # Uuids of the instances on this host, for the server group and same/different
        # host filters.
        self.instances: set[str] = set()
        self.aggregates: list[objects.Aggregate] = []
        # The row of the host's compute service (_SERVICE_COLUMNS), None if it has none.
        self.service: Row | None = None
        self.availability_zone: str | None = None
        self.traits: list[str] = []

    @property
    def vcpus_free(self) -> float:
        return self.vcpus_total * self.cpu_allocation_ratio - self.vcpus_used

    def update_from_compute_node(self, compute: NodeRecord) -> None:
        self.uuid = compute.uuid
        ram_ratio = compute.ram_allocation_ratio or 1.0
        disk_ratio = compute.disk_allocation_ratio or 1.0
        self.total_usable_ram_mb = compute.memory_mb
        self.free_ram_mb = (compute.free_ram_mb if compute.free_ram_mb is not None
                            else int(compute.memory_mb * ram_ratio) - compute.memory_mb_used)
        self.total_usable_disk_gb = compute.local_gb
        free_gb = (compute.free_disk_gb if compute.free_disk_gb is not None
                   else int(compute.local_gb * disk_ratio) - compute.local_gb_used)
        self.free_disk_mb = free_gb * 1024
        self.vcpus_total = compute.vcpus
        self.vcpus_used = compute.vcpus_used
        self.cpu_allocation_ratio = compute.cpu_allocation_ratio or 1.0
        self.num_instances = compute.running_vms or 0
        self.hypervisor_type = compute.hypervisor_type
        self.hypervisor_version = compute.hypervisor_version
        self.hypervisor_hostname = compute.hypervisor_hostname
        self.supported_instances = [list(s) for s in _node_field(compute,
                                                                 'supported_instances')]
        self.stats = {k: v for k, v in _node_field(compute, 'stats', {}).items()
                      if v is not None}
        try:
            self.failed_builds = int(self.stats.get('failed_builds', 0))
        except ValueError:
            self.failed_builds = 0

    def update_from_instances(self, instances: list[tuple[str, str | None, str | None]]
                              ) -> None:
        """Count the instances on this host: ``(uuid, vm_state, task_state)`` each."""
        self.instances = {uuid for uuid, _vm, _task in instances}
        self.num_instances = len(self.instances)
        self.num_io_ops = sum(1 for _uuid, vm, task in instances
                              if vm == vm_states.BUILDING or task in IO_TASK_STATES)

    def update_from_instance_counts(self, count: int, io_ops: int) -> None:
        """As ``update_from_instances`` when no filter asks which instances."""
        self.num_instances = count
        self.num_io_ops = io_ops

    def update_from_aggregates(self, aggregates: list[objects.Aggregate]) -> None:
        """Keep the host's aggregates; its zone is theirs, else the default zone."""
        self.aggregates = list(aggregates)
        zones = sorted({a.availability_zone for a in aggregates if a.availability_zone})
        self.availability_zone = ','.join(zones) or CONF.default_availability_zone

    def update_from_provider_summary(self, summary: dict[str, Any]) -> None:
        """Take capacity and usage from Placement (capacity already applies the ratio)."""
        resources = summary.get('resources', {})
        if 'MEMORY_MB' in resources:
            ram = resources['MEMORY_MB']
            self.free_ram_mb = ram['capacity'] - ram['used']
        if 'DISK_GB' in resources:
            disk = resources['DISK_GB']
            self.free_disk_mb = (disk['capacity'] - disk['used']) * 1024
        if 'VCPU' in resources:
            vcpu = resources['VCPU']
            self.vcpus_total, self.vcpus_used = vcpu['capacity'], vcpu['used']
            self.cpu_allocation_ratio = 1.0
        self.traits = list(summary.get('traits', []))

    def consume_from_request(self, spec_obj: objects.RequestSpec) -> None:
        """Count one more instance of ``spec_obj`` here, so the next one spreads."""
        flavor = spec_obj.flavor
        self.free_ram_mb -= flavor.memory_mb
        root_gb = 0 if spec_obj.obj_attr_is_set('is_bfv') and spec_obj.is_bfv \
            else flavor.root_gb
        disk_gb = root_gb + flavor.ephemeral_gb + math.ceil(flavor.swap / 1024)
        self.free_disk_mb -= disk_gb * 1024
        self.vcpus_used += flavor.vcpus
        self.num_instances += 1
        # A build is an I/O operation until it ends, as the I/O filter and weigher count.
        self.num_io_ops += 1
        if spec_obj.obj_attr_is_set('instance_uuid') and spec_obj.instance_uuid:
            self.instances.add(spec_obj.instance_uuid)

    def __repr__(self) -> str:
        return ('(%s, %s) ram: %sMB disk: %sMB vcpus: %s/%s instances: %s io_ops: %s'
                % (self.host, self.nodename, self.free_ram_mb, self.free_disk_mb,
                   self.vcpus_used, self.vcpus_total, self.num_instances, self.num_io_ops))


def _node_field(compute: NodeRecord, name: str, default: Any = ()) -> Any:
    # stats and supported_instances are optional on the ComputeNode object.
    if hasattr(compute, 'obj_attr_is_set') and (
            name not in compute.fields or not compute.obj_attr_is_set(name)):
        return default
    value = getattr(compute, name, None)
    return default if value is None else value


# What the scheduler reads of compute nodes and services: plain rows, not objects (a
# request may look at thousands of nodes; building an object for each costs more than
# the query).
_NODE_COLUMNS = ('uuid', 'host', 'hypervisor_hostname', 'vcpus', 'vcpus_used', 'memory_mb',
                 'memory_mb_used', 'free_ram_mb', 'local_gb', 'local_gb_used', 'free_disk_gb',
                 'running_vms', 'hypervisor_type', 'hypervisor_version',
                 'cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio',
                 'stats', 'supported_instances')
_SERVICE_COLUMNS = ('id', 'uuid', 'host', 'binary', 'topic', 'disabled', 'disabled_reason',
                    'forced_down', 'last_seen_up', 'updated_at', 'created_at', 'version')
_JSON_NODE_COLUMNS = ('stats', 'supported_instances')


def _node_record(row: Row) -> types.SimpleNamespace:
    values = dict(row._mapping)
    for name in _JSON_NODE_COLUMNS:
        values[name] = jsonutils.loads(values[name]) if values[name] else None
    return types.SimpleNamespace(**values)


@functools.cache
def _host_queries() -> types.SimpleNamespace:
    """The three queries of ``_cell_hosts``, built once (building them per request was a
    third of their cost); their lists are expanding parameters."""
    nodes_t, services_t = main_models.ComputeNode, main_models.Service
    instances_t = main_models.Instance
    hosts: BindParameter[list[str]] = bindparam('hosts', expanding=True)
    on_hosts = (instances_t.host.in_(hosts), instances_t.deleted == 0)
    io = case((instances_t.vm_state == vm_states.BUILDING, 1),
              (instances_t.task_state.in_(sorted(IO_TASK_STATES)), 1), else_=0)
    return types.SimpleNamespace(
        nodes=select(*(getattr(nodes_t, c) for c in _NODE_COLUMNS)).where(
            nodes_t.uuid.in_(bindparam('uuids', expanding=True)), nodes_t.deleted == 0),
        services=select(*(getattr(services_t, c) for c in _SERVICE_COLUMNS)).where(
            services_t.binary == COMPUTE_BINARY, services_t.deleted == 0,
            services_t.host.in_(hosts)),
        instances=select(instances_t.host, instances_t.uuid, instances_t.vm_state,
                         instances_t.task_state).where(*on_hosts),
        counts=select(instances_t.host, func.count(), func.sum(io))
        .where(*on_hosts).group_by(instances_t.host))


def _cell_hosts(cctxt: RequestContext, uuids: list[str], with_uuids: bool
                ) -> tuple[list[types.SimpleNamespace], dict[str, Row], dict[str, Any]]:
    """The compute nodes among ``uuids``, their hosts' compute services, and the
    instances on those hosts, of one cell: three queries whatever the number of hosts.

    The instances come as ``(uuid, vm_state, task_state)`` rows per host when
    ``with_uuids``, else as ``(count, io_ops)`` per host, counted by the database.
    """
    queries = _host_queries()
    by_host: dict[str, Any] = {}
    with engine.cell_reader(cctxt) as session:
        conn = session.connection()
        nodes = [_node_record(row) for row in conn.execute(queries.nodes, {'uuids': uuids})]
        hosts = sorted({n.host for n in nodes if n.host})
        if not hosts:
            return nodes, {}, by_host
        services = {row.host: row
                    for row in conn.execute(queries.services, {'hosts': hosts})}
        if with_uuids:
            for host, uuid, vm_state, task_state in conn.execute(queries.instances,
                                                                 {'hosts': hosts}):
                by_host.setdefault(host, []).append((uuid, vm_state, task_state))
        else:
            for host, count, io_ops in conn.execute(queries.counts, {'hosts': hosts}):
                by_host[host] = (int(count), int(io_ops or 0))
    return nodes, services, by_host


def needs_instance_uuids(spec_obj: objects.RequestSpec | None) -> bool:
    """Whether a filter or weigher may ask which instances a host runs: only for a
    server group or the same_host/different_host hints; otherwise counts do."""
    if spec_obj is None:
        return True
    if filters.instance_group(spec_obj) is not None:
        return True
    return bool(filters.scheduler_hint_list(spec_obj, 'same_host')
                or filters.scheduler_hint_list(spec_obj, 'different_host'))


class HostManager:
    """Turns Placement's candidates into HostStates, then filters and weighs them.

    :param filter_handler: defaults to the filters of ``[filter_scheduler]``.
    :param weight_handler: defaults to the weighers of ``[filter_scheduler]``.
    """

    def __init__(self, filter_handler: filters.HostFilterHandler | None = None,
                 weight_handler: weights.HostWeightHandler | None = None) -> None:
        self.filter_handler = filter_handler or filters.HostFilterHandler()
        self.weight_handler = weight_handler or weights.HostWeightHandler()
        # 'cells' and 'aggregates', each as read at most CACHE_SECONDS ago.
        self._cache: cachetools.TTLCache[str, list] = cachetools.TTLCache(
            maxsize=2, ttl=CACHE_SECONDS)
        self._cache_lock = threading.Lock()

    @cachetools.cachedmethod(lambda self: self._cache, key=lambda self, context: 'cells',
                             lock=lambda self: self._cache_lock)
    def _cells(self, context: RequestContext) -> list[objects.CellMapping]:
        """The cells to schedule to: every enabled one but cell0."""
        return [c for c in objects.CellMappingList.get_all(context)
                if not c.is_cell0 and not c.disabled]

    @cachetools.cachedmethod(lambda self: self._cache,
                             key=lambda self, context: 'aggregates',
                             lock=lambda self: self._cache_lock)
    def _aggregates(self, context: RequestContext) -> list[objects.Aggregate]:
        return list(objects.AggregateList.get_all(context))

    def forget_aggregates(self) -> None:
        """The API changed an aggregate: read them again for the next request."""
        with self._cache_lock:
            self._cache.pop('aggregates', None)

    def forget(self) -> None:
        """Read cells and aggregates again for the next request."""
        with self._cache_lock:
            self._cache.clear()

    def _aggregates_by_host(self, context: RequestContext, hosts: list[str]
                            ) -> dict[str, list[objects.Aggregate]]:
        by_host: dict[str, list[objects.Aggregate]] = {h: [] for h in hosts}
        for aggregate in self._aggregates(context):
            for host in aggregate.hosts:
                if host in by_host:
                    by_host[host].append(aggregate)
        return by_host

    def get_host_states_by_uuids(self, context: RequestContext, uuids: list[str],
                                 provider_summaries: dict[str, dict[str, Any]],
                                 spec_obj: objects.RequestSpec | None = None
                                 ) -> list[HostState]:
        """HostStates of the compute nodes ``uuids``, looked up in every cell but cell0.

        Providers with no compute node in any cell are left out (logged); a cell that
        fails or times out is skipped so the others can still be used. Without a
        ``spec_obj`` that needs them (see ``needs_instance_uuids``), hosts carry
        instance counts only.
        """
        with_uuids = needs_instance_uuids(spec_obj)
        results = nl_context.scatter_gather_cells(context, self._cells(context),
                                                  CELL_TIMEOUT, _cell_hosts, uuids,
                                                  with_uuids)
        states = []
        failed: dict[str, object] = {}
        for cell_uuid, result in results.items():
            if result is nl_context.did_not_respond_sentinel or isinstance(result, Exception):
                LOG.warning('Cell %s is skipped for scheduling: %s', cell_uuid, result)
                failed[cell_uuid] = result
                continue
            nodes, services, instances = result
            for node in nodes:
                state = HostState(node.host, node.hypervisor_hostname, cell_uuid)
                state.update_from_compute_node(node)
                if node.uuid in provider_summaries:
                    state.update_from_provider_summary(provider_summaries[node.uuid])
                if with_uuids:
                    state.update_from_instances(instances.get(node.host, []))
                else:
                    state.update_from_instance_counts(*instances.get(node.host, (0, 0)))
                state.service = services.get(node.host)
                states.append(state)
        if failed and not states:
            # No cell answered: that is an outage to wait out, not "no host fits".
            cell_uuid, result = next(iter(failed.items()))
            raise exception.CellUnavailable(
                cell_uuid=cell_uuid, reason='no answer within %d seconds' % CELL_TIMEOUT
                if result is nl_context.did_not_respond_sentinel else
                '%s: %s' % (type(result).__name__, result))
        aggregates = self._aggregates_by_host(context, [s.host for s in states])
        for state in states:
            state.update_from_aggregates(aggregates[state.host])
        missing = set(uuids) - {s.uuid for s in states}
        if missing:
            LOG.info('Resource providers with no compute node in any cell: %s',
                     ', '.join(sorted(missing)))
        return states

    def get_filtered_hosts(self, host_states: list[HostState],
                           spec_obj: objects.RequestSpec
                           ) -> tuple[list[HostState], list[filters.FilterResult]]:
        """Apply ignore/force hosts, then the filters (forced hosts skip the filters).

        :returns: (hosts that passed, what each filter did).
        """
        hosts = list(host_states)
        ignore = _spec_list(spec_obj, 'ignore_hosts')
        if ignore:
            hosts = [h for h in hosts if h.host not in ignore]
        force_hosts = _spec_list(spec_obj, 'force_hosts')
        force_nodes = _spec_list(spec_obj, 'force_nodes')
        if force_hosts or force_nodes:
            forced = [h for h in hosts if (not force_hosts or h.host in force_hosts)
                      and (not force_nodes or h.nodename in force_nodes)]
            return forced, [filters.FilterResult('force_hosts', len(hosts), len(forced))]
        requested = (spec_obj.requested_destination
                     if spec_obj.obj_attr_is_set('requested_destination') else None)
        if requested:
            before = len(hosts)
            hosts = [h for h in hosts if h.host == requested]
            passed, results = self.filter_handler.get_filtered_hosts(hosts, spec_obj)
            return passed, [filters.FilterResult('requested_destination', before,
                                                 len(hosts)), *results]
        return self.filter_handler.get_filtered_hosts(hosts, spec_obj)

    def get_weighed_hosts(self, host_states: list[HostState],
                          spec_obj: objects.RequestSpec) -> list[weights.WeighedHost]:
        return self.weight_handler.get_weighed_objects(host_states, spec_obj)


def _spec_list(spec_obj: objects.RequestSpec, name: str) -> list[str]:
    return list(getattr(spec_obj, name) or []) if spec_obj.obj_attr_is_set(name) else []
