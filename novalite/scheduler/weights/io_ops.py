"""IoOpsWeigher: weigh hosts by their I/O-heavy operations in progress."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import weights

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class IoOpsWeigher(weights.BaseWeigher):
    """More builds, resizes or snapshots in progress weigh more; the negative default
    of ``[filter_scheduler] io_ops_weight_multiplier`` prefers idle hosts."""

    def weight_multiplier(self, host_state: HostState) -> float:
        return weights.aggregate_multiplier(host_state, 'io_ops_weight_multiplier')

    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        return host_state.num_io_ops
