"""ServerGroupSoftAntiAffinityWeigher: avoid hosts running members of the group."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights
from novalite.scheduler.weights.soft_affinity import members_on_host

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class ServerGroupSoftAntiAffinityWeigher(weights.BaseWeigher):
    """The more members of the ``soft-anti-affinity`` group a host runs, the worse
    (``[filter_scheduler] soft_anti_affinity_weight_multiplier``); unlike the
    anti-affinity filter it never refuses a host."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state,
                                            'soft_anti_affinity_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return -members_on_host(host_state, spec_obj, 'soft-anti-affinity')
