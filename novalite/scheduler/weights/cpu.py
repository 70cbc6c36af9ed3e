"""CPUWeigher: prefer hosts with more free vCPUs (or less, with a negative multiplier)."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights


class CPUWeigher(weights.BaseWeigher):
    """Weigh hosts by free vCPUs (``[filter_scheduler] cpu_weight_multiplier``)."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state, 'cpu_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return host_state.vcpus_free
