"""BuildFailureWeigher: push hosts whose builds keep failing to the back."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class BuildFailureWeigher(weights.BaseWeigher):
    """Each recent build failure on a host (its compute node's ``failed_builds`` stat,
    reset by a successful build) lowers its weight; the large default of
    ``[filter_scheduler] build_failure_weight_multiplier`` outweighs the other weighers
    so a broken host is tried last."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'build_failure_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return -host_state.failed_builds
