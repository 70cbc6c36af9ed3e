"""CPUWeigher: prefer hosts with more free vCPUs (or less, with a negative multiplier)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class CPUWeigher(weights.BaseWeigher):
    """Weigh hosts by free vCPUs (``[filter_scheduler] cpu_weight_multiplier``)."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'cpu_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return host_state.vcpus_free
