"""ServerGroupSoftAffinityWeigher: prefer hosts running members of a soft-affinity group."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import filters, weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


def members_on_host(host_state: HostState, spec_obj: objects.RequestSpec, policy: str) -> int:
    """How many members of the request's group, if its policy is ``policy``, run here."""
    group = filters.instance_group(spec_obj)
    if group is None or group.policy != policy:
        return 0
    return len(host_state.instances & set(group.members))


class ServerGroupSoftAffinityWeigher(weights.BaseWeigher):
    """The more members of the ``soft-affinity`` group a host runs, the better
    (``[filter_scheduler] soft_affinity_weight_multiplier``); unlike the affinity filter
    it never refuses a host."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'soft_affinity_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return members_on_host(host_state, spec_obj, 'soft-affinity')
