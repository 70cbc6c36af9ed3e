"""RAMWeigher: prefer hosts with more free RAM (or less, with a negative multiplier)."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights


class RAMWeigher(weights.BaseWeigher):
    """Weigh hosts by free RAM (``[filter_scheduler] ram_weight_multiplier``)."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state, 'ram_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return host_state.free_ram_mb
