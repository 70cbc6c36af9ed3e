"""Capacity what-if: how many more servers of a flavor fit on each compute host.

Read-only: Placement's inventories and usages give what each host's resources allow,
then the scheduler's own filters run on the HostStates the scheduler would build, the
request consumed on each host one instance at a time, so that a filter that counts
(NumInstancesFilter, say) stops the count where booting one by one would stop.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from oslo_utils import uuidutils

from novalite import exception, objects
from novalite.conf import CONF
from novalite.scheduler import host_manager as host_manager_mod
from novalite.scheduler import request_filter, utils

if TYPE_CHECKING:
    from novalite.context import RequestContext
    from novalite.scheduler.client.report import SchedulerReportClient
    from novalite.scheduler.host_manager import HostManager, HostState

# Bound on the count of one host when the flavor asks Placement for nothing.
MAX_PER_HOST = 10000
# What a forbidden trait means, for the limit column.
_TRAIT_MEANINGS = {request_filter.COMPUTE_STATUS_DISABLED: 'compute service disabled'}


@dataclasses.dataclass
class HostCapacity:
    """How many more instances one compute node takes, and what stops the next."""

    host: str
    node: str
    zone: str | None
    fits: int
    limited_by: str

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Capacity:
    """The answer for one flavor: every compute node Placement knows, sorted by host."""

    flavor: str
    hosts: list[HostCapacity]

    @property
    def total(self) -> int:
        return sum(h.fits for h in self.hosts)


def fit_of_class(inventory: dict[str, Any], used: int, amount: int) -> int:
    """How many allocations of ``amount`` one inventory record still takes.

    Capacity is ``(total - reserved) * allocation_ratio`` as Placement computes it; an
    amount outside ``min_unit``..``max_unit`` or not a multiple of ``step_size`` is
    refused outright, as Placement refuses it.
    """
    if amount > inventory.get('max_unit', amount) or amount < inventory.get('min_unit', 1):
        return 0
    if amount % (inventory.get('step_size') or 1):
        return 0
    return max(_capacity(inventory) - used, 0) // amount


def _capacity(inventory: dict[str, Any]) -> int:
    return int((inventory['total'] - inventory.get('reserved', 0))
               * inventory.get('allocation_ratio', 1.0))


def fit_by_resources(inventories: dict[str, dict], usages: dict[str, int],
                     asked: dict[str, int]) -> tuple[int, str]:
    """How many instances asking ``asked`` one provider takes, and the class that
    limits it (the first in name order among equals).

    :returns: (count, resource class); ``(MAX_PER_HOST, 'nothing asked')`` when
        ``asked`` is empty.
    """
    fits = [(min(fit_of_class(inventories[rc], usages.get(rc, 0), amount), MAX_PER_HOST)
             if rc in inventories else 0, rc) for rc, amount in sorted(asked.items())]
    # min keeps the first of equals: the first class in name order.
    return min(fits, key=lambda fit: fit[0], default=(MAX_PER_HOST, 'nothing asked'))


def trait_refusal(traits: list[str], request: utils.ResourceRequest) -> str | None:
    """Why Placement would not offer a provider with ``traits``, or None."""
    for trait in sorted(request.forbidden_traits & set(traits)):
        meaning = _TRAIT_MEANINGS.get(trait)
        return 'trait %s%s' % (trait, ' (%s)' % meaning if meaning else '')
    for trait in sorted(request.required_traits - set(traits)):
        return 'lacks trait %s' % trait
    return None


def provider_summary(provider: dict[str, Any]) -> dict[str, Any]:
    """The ``provider_summaries`` entry of ``GET /allocation_candidates`` for one
    provider of ``get_provider_usages_and_inventories``, for HostState."""
    resources = {rc: {'capacity': _capacity(inventory), 'used': provider['usages'].get(rc, 0)}
                 for rc, inventory in provider['inventories'].items()}
    return {'resources': resources, 'traits': provider.get('traits', [])}


def count_on_host(state: HostState, spec: objects.RequestSpec,
                  host_manager: HostManager, resource_limit: tuple[int, str],
                  outside: str | None = None) -> HostCapacity:
    """Consume ``spec`` on ``state`` until a filter or the resources refuse.

    Each instance is counted as booted and finished: it adds to the host's instances
    and resources, not to its I/O operations (a build in flight ends before the next
    boot), so IoOpsFilter refuses only a host that is busy now.

    :param resource_limit: what Placement allows here (``fit_by_resources``).
    :param outside: why the host is outside the question (zone, aggregate), or None.
    """
    fits, resource = resource_limit
    count = 0
    while True:
        refused = _refusing_filter(host_manager, state, spec)
        if refused is not None:
            return _result(state, count, 'filter %s' % refused)
        if outside is not None:
            return _result(state, 0, outside)
        if count >= fits:
            return _result(state, count, resource)
        spec.instance_uuid = uuidutils.generate_uuid()
        io_ops = state.num_io_ops
        state.consume_from_request(spec)
        state.num_io_ops = io_ops
        count += 1


def _refusing_filter(host_manager: HostManager, state: HostState,
                     spec: objects.RequestSpec) -> str | None:
    passed, results = host_manager.get_filtered_hosts([state], spec)
    if passed:
        return None
    # The handler stops at the first filter that leaves no host: the last one run.
    return results[-1].name if results else 'unknown'


def _result(state: HostState, fits: int, limited_by: str) -> HostCapacity:
    return HostCapacity(host=state.host, node=state.nodename,
                        zone=state.availability_zone, fits=fits, limited_by=limited_by)


class CapacityCalculator:
    """Answers "how many more servers of this flavor fit, and where".

    :param reportclient: the Placement client.
    :param host_manager: builds and filters the HostStates; the scheduler's filters
        of ``[filter_scheduler] enabled_filters`` by default.
    :raises PlacementAPIConnectFailure: from ``calculate`` when Placement cannot be
        reached.
    """

    def __init__(self, reportclient: SchedulerReportClient,
                 host_manager: HostManager | None = None) -> None:
        self.reportclient = reportclient
        self.host_manager = host_manager or host_manager_mod.HostManager()

    def calculate(self, context: RequestContext, flavor: objects.Flavor,
                  zone: str | None = None,
                  aggregate: objects.Aggregate | None = None) -> Capacity:
        """Every compute node Placement knows, with what it still takes of ``flavor``.

        :param zone: the servers' availability zone; hosts elsewhere take none.
        :param aggregate: only the hosts of this aggregate take any.
        """
        spec = objects.RequestSpec.from_components(
            context, uuidutils.generate_uuid(), None, flavor, 1, availability_zone=zone)
        request = utils.resources_from_request_spec(spec)
        request_filter.process_reqspec(context, spec, request)
        providers = self.reportclient.get_provider_usages_and_inventories(
            context, with_traits=True)
        summaries = {uuid: provider_summary(p) for uuid, p in providers.items()}
        states = self.host_manager.get_host_states_by_uuids(context, list(providers),
                                                            summaries, spec)
        hosts = []
        for state in sorted(states, key=lambda s: (s.host, s.nodename)):
            assert state.uuid is not None, 'HostStates are built from providers'
            provider = providers[state.uuid]
            refusal = trait_refusal(provider.get('traits', []), request)
            limit = (0, refusal) if refusal else fit_by_resources(
                provider['inventories'], provider['usages'], request.resources)
            hosts.append(count_on_host(state, spec, self.host_manager, limit,
                                       _outside(state, zone, aggregate)))
        return Capacity(flavor=flavor.name or flavor.flavorid, hosts=hosts)


def _outside(state: HostState, zone: str | None,
             aggregate: objects.Aggregate | None) -> str | None:
    if zone and zone not in (state.availability_zone or '').split(','):
        return 'not in zone %s' % zone
    if aggregate is not None and state.host not in (aggregate.hosts or []):
        return 'not in aggregate %s' % aggregate.name
    return None


# -- what the operator names ---------------------------------------------------------

def find_flavor(context: RequestContext, name_or_id: str) -> objects.Flavor:
    """The flavor with this id, else with this name (as the API's clients look up).

    :raises FlavorNotFound:
    """
    try:
        return objects.Flavor.get_by_flavor_id(context, name_or_id)
    except exception.FlavorNotFound:
        return objects.Flavor.get_by_name(context, name_or_id)


def find_aggregate(context: RequestContext, name_or_id: str) -> objects.Aggregate:
    """The aggregate with this id, uuid or name.

    :raises AggregateNotFound:
    """
    for aggregate in objects.AggregateList.get_all(context):
        if name_or_id in (str(aggregate.id), aggregate.uuid, aggregate.name):
            return aggregate
    raise exception.AggregateNotFound(aggregate_id=name_or_id)


def known_zones(context: RequestContext) -> set[str]:
    """The zones of the aggregates, and the default zone of hosts in none."""
    zones = {a.availability_zone for a in objects.AggregateList.get_all(context)
             if a.availability_zone}
    return zones | {CONF.default_availability_zone}
