"""NumInstancesWeigher: weigh hosts by how many instances they run."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class NumInstancesWeigher(weights.BaseWeigher):
    """More instances weigh more; ``[filter_scheduler] num_instances_weight_multiplier``
    (0.0 by default) decides: negative spreads, positive stacks."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'num_instances_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return host_state.num_instances
