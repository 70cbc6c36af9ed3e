"""ServerGroupSoftAntiAffinityWeigher: avoid hosts running members of the group."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights
from novalite.scheduler.weights.soft_affinity import members_on_host


class ServerGroupSoftAntiAffinityWeigher(weights.BaseWeigher):
    """The more members of the ``soft-anti-affinity`` group a host runs, the worse
    (``[filter_scheduler] soft_anti_affinity_weight_multiplier``); unlike the
    anti-affinity filter it never refuses a host."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state,
                                            'soft_anti_affinity_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return -members_on_host(host_state, spec_obj, 'soft-anti-affinity')
