"""DiskWeigher: prefer hosts with more free disk (or less, with a negative multiplier)."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights


class DiskWeigher(weights.BaseWeigher):
    """Weigh hosts by free disk (``[filter_scheduler] disk_weight_multiplier``)."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state, 'disk_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return host_state.free_disk_mb
