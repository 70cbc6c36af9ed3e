"""The scheduler service's endpoint: select_destinations, from Placement to Selections."""
from __future__ import annotations

import random
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite import exception, manager, objects, transient
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.scheduler import filters, host_manager, request_filter, utils
from novalite.scheduler.client import report

LOG = logging.getLogger(__name__)


class SchedulerManager(manager.Manager):
    """Chooses hosts: request filters, Placement candidates, filters, weighers, claims.

    :param reportclient: the Placement client.
    :param host_manager_: builds, filters and weighs HostStates.
    """

    target = messaging.Target(version='1.1')

    def __init__(self, reportclient: report.SchedulerReportClient | None = None,
                 host_manager_: host_manager.HostManager | None = None,
                 host: str | None = None) -> None:
        super().__init__(host=host, service_name='scheduler')
        self.reportclient = reportclient or report.SchedulerReportClient()
        self.host_manager = host_manager_ or host_manager.HostManager()

    def select_destinations(self, context: RequestContext, spec_obj: objects.RequestSpec,
                            instance_uuids: list[str], return_objects: bool = True,
                            return_alternates: bool = False
                            ) -> list[list[objects.Selection]] | list[dict[str, Any]]:
        """RPC endpoint; see :meth:`novalite.scheduler.rpcapi.SchedulerAPI.select_destinations`.

        With ``return_objects`` False the legacy answer comes back: one
        ``{'host', 'nodename', 'limits'}`` dict per instance.
        """
        num_instances = len(instance_uuids) if instance_uuids else spec_obj.num_instances
        LOG.debug('Scheduling %d instance(s) of flavor %s', num_instances,
                  spec_obj.flavor.flavorid)
        request = utils.resources_from_request_spec(spec_obj)
        request_filter.process_reqspec(context, spec_obj, request)
        try:
            alloc_reqs, summaries, version = self.reportclient.get_allocation_candidates(
                context, request.resources, limit=self._placement_limit(spec_obj),
                required_traits=sorted(request.required_traits),
                forbidden_traits=sorted(request.forbidden_traits),
                member_of=request.member_of or None)
        except exception.ResourceProviderError as exc:
            if transient.is_transient(exc):
                raise
            # Placement refused the question (a trait it does not know, say): no host
            # can answer it, as Nova's scheduler concludes.
            raise exception.NoValidHost(reason='Placement refused the request for '
                                               'allocation candidates: %s' % exc) from exc
        if not alloc_reqs:
            providers = self.reportclient.get_provider_usages_and_inventories(
                context, with_traits=bool(request.required_traits or request.forbidden_traits))
            raise exception.NoValidHost(reason=utils.explain_no_candidates(request, providers))

        utils.setup_instance_group(context, spec_obj, self._enabled_names())
        by_rp = _allocation_requests_by_root(alloc_reqs, summaries)
        hosts = self.host_manager.get_host_states_by_uuids(context, list(by_rp), summaries,
                                                           spec_obj)
        if not hosts:
            raise exception.NoValidHost(reason=(
                'Placement offered %d resource providers, but none is a compute node of '
                'an enabled cell (have the hosts been discovered?).' % len(by_rp)))
        selections = self._schedule(context, spec_obj, instance_uuids, num_instances, hosts,
                                    by_rp, version, return_alternates)
        if return_objects:
            return selections
        return [{'host': s[0].service_host, 'nodename': s[0].nodename, 'limits': {}}
                for s in selections]

    def update_aggregates(self, context: RequestContext,
                          aggregates: list[objects.Aggregate]) -> None:
        """RPC endpoint (fanout cast): the API changed ``aggregates``."""
        self.host_manager.forget_aggregates()

    def delete_aggregate(self, context: RequestContext, aggregate: objects.Aggregate) -> None:
        """RPC endpoint (fanout cast): the API deleted ``aggregate``."""
        self.host_manager.forget_aggregates()

    def _enabled_names(self) -> list[str]:
        return ([type(f).__name__ for f in self.host_manager.filter_handler.filters]
                + [type(w).__name__ for w in self.host_manager.weight_handler.weighers])

    @staticmethod
    def _placement_limit(spec_obj: objects.RequestSpec) -> int | None:
        # A forced host may be anywhere in Placement's answer: ask for all of it.
        forced = any(spec_obj.obj_attr_is_set(f) and getattr(spec_obj, f)
                     for f in ('force_hosts', 'force_nodes'))
        return None if forced else CONF.scheduler.max_placement_results

    def _schedule(self, context: RequestContext, spec_obj: objects.RequestSpec,
                  instance_uuids: list[str], num_instances: int,
                  hosts: list[host_manager.HostState], by_rp: dict[str, list[dict]],
                  version: str, return_alternates: bool) -> list[list[objects.Selection]]:
        """Place each instance in turn, claiming as it goes; undo all claims on failure."""
        claimed: list[str] = []
        selections: list[list[objects.Selection]] = []
        spec_uuid = spec_obj.instance_uuid if spec_obj.obj_attr_is_set('instance_uuid') \
            else None
        try:
            for index in range(num_instances):
                uuid = instance_uuids[index] if instance_uuids else None
                if uuid is not None:
                    # The filters look at the instance being placed (anti-affinity lets
                    # a host that already runs it pass); one spec serves them all.
                    spec_obj.instance_uuid = uuid
                ordered = self._sorted_hosts(spec_obj, hosts, index, num_instances)
                chosen = self._claim_first(context, spec_obj, uuid, ordered, by_rp, version)
                if chosen is None:
                    raise exception.NoValidHost(reason=_prefix(index, num_instances) + (
                        'Placement refused the claim on each of the %d hosts that passed the '
                        'filters; they filled up meanwhile.' % len(ordered)))
                if uuid is not None:
                    claimed.append(uuid)
                chosen.consume_from_request(spec_obj)
                _consume_in_group(spec_obj, chosen, uuid)
                selections.append(self._selections(chosen, ordered, by_rp, version,
                                                   return_alternates))
        except Exception:
            for uuid in claimed:
                self._free(context, uuid)
            raise
        finally:
            if spec_uuid is not None:
                spec_obj.instance_uuid = spec_uuid
        return selections

    def _sorted_hosts(self, spec_obj: objects.RequestSpec, hosts: list[host_manager.HostState],
                      index: int, num_instances: int) -> list[host_manager.HostState]:
        passed, results = self.host_manager.get_filtered_hosts(hosts, spec_obj)
        if not passed:
            raise exception.NoValidHost(reason=_prefix(index, num_instances)
                                        + filters.explain_filtered_out(results))
        ordered = [w.obj for w in self.host_manager.get_weighed_hosts(passed, spec_obj)]
        # Among the best host_subset_size hosts, pick at random so that parallel
        # schedulers do not all race for the same host.
        subset = min(CONF.filter_scheduler.host_subset_size, len(ordered))
        if subset > 1:
            ordered.insert(0, ordered.pop(random.randrange(subset)))
        return ordered

    def _claim_first(self, context: RequestContext, spec_obj: objects.RequestSpec,
                     uuid: str | None, ordered: list[host_manager.HostState],
                     by_rp: dict[str, list[dict]], version: str
                     ) -> host_manager.HostState | None:
        """The first host of ``ordered`` Placement accepts the claim on, or None."""
        if uuid is None:
            # No consumer to claim for (legacy callers): the best host is the answer.
            return ordered[0]
        assert spec_obj.project_id is not None and spec_obj.user_id is not None, \
            'a request spec names the owner of its instances'
        for host in ordered:
            if self.reportclient.claim_resources(
                    context, uuid, _alloc_request(by_rp, host), spec_obj.project_id,
                    spec_obj.user_id, allocation_request_version=version):
                return host
            LOG.debug('Claim for %s refused on %s; trying the next host', uuid, host)
        return None

    @staticmethod
    def _selections(chosen: host_manager.HostState, ordered: list[host_manager.HostState],
                    by_rp: dict[str, list[dict]], version: str,
                    return_alternates: bool) -> list[objects.Selection]:
        selected = [objects.Selection.from_host_state(
            chosen, _alloc_request(by_rp, chosen), version)]
        if not return_alternates:
            return selected
        alternates = [h for h in ordered if h is not chosen and h.cell_uuid == chosen.cell_uuid]
        return selected + [objects.Selection.from_host_state(h, _alloc_request(by_rp, h), version)
                           for h in alternates[:CONF.scheduler.max_attempts - 1]]

    def _free(self, context: RequestContext, uuid: str) -> None:
        try:
            self.reportclient.delete_allocation_for_instance(context, uuid)
        except Exception:
            LOG.exception('Could not free the allocations of %s after a failed request', uuid)


def _allocation_requests_by_root(alloc_reqs: list[dict], summaries: dict[str, dict[str, Any]]
                                 ) -> dict[str, list[dict]]:
    """Group allocation requests by the root provider (the compute node) they use."""
    by_rp: dict[str, list[dict]] = {}
    for alloc_req in alloc_reqs:
        rp = next(iter(alloc_req['allocations']))
        root = summaries.get(rp, {}).get('root_provider_uuid', rp)
        by_rp.setdefault(root, []).append(alloc_req)
    return by_rp


def _alloc_request(by_rp: dict[str, list[dict]], host: host_manager.HostState) -> dict:
    """The first allocation request Placement offered on ``host``."""
    assert host.uuid is not None, 'HostStates are built from the providers Placement offered'
    return by_rp[host.uuid][0]


def _consume_in_group(spec_obj: objects.RequestSpec, chosen: host_manager.HostState,
                      uuid: str | None) -> None:
    """Count the instance just placed as a member on ``chosen``, so the group filters
    and weighers see it when placing the next instance of the same request."""
    group = spec_obj.instance_group if spec_obj.obj_attr_is_set('instance_group') else None
    if group is None:
        return
    if chosen.host not in (group.hosts or []):
        group.hosts = list(group.hosts or []) + [chosen.host]
    if uuid is not None and uuid not in (group.members or []):
        group.members = list(group.members or []) + [uuid]
    group.obj_reset_changes(['hosts', 'members'])


def _prefix(index: int, num_instances: int) -> str:
    if index == 0:
        return ''
    return 'Only %d of %d instances could be placed. ' % (index, num_instances)
