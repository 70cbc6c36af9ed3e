"""NumInstancesWeigher: weigh hosts by how many instances they run."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights


class NumInstancesWeigher(weights.BaseWeigher):
    """More instances weigh more; ``[filter_scheduler] num_instances_weight_multiplier``
    (0.0 by default) decides: negative spreads, positive stacks."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state, 'num_instances_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return host_state.num_instances
