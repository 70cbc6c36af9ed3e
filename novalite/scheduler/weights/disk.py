"""DiskWeigher: prefer hosts with more free disk (or less, with a negative multiplier)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class DiskWeigher(weights.BaseWeigher):
    """Weigh hosts by free disk (``[filter_scheduler] disk_weight_multiplier``)."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'disk_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return host_state.free_disk_mb
