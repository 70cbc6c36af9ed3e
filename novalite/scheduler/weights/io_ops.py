"""IoOpsWeigher: weigh hosts by their I/O-heavy operations in progress."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import weights


class IoOpsWeigher(weights.BaseWeigher):
    """More builds, resizes or snapshots in progress weigh more; the negative default
    of ``[filter_scheduler] io_ops_weight_multiplier`` prefers idle hosts."""

    def weight_multiplier(self, host_state: Any) -> float:
        return weights.aggregate_multiplier(host_state, 'io_ops_weight_multiplier')

    def _weigh_object(self, host_state: Any, spec_obj: Any) -> float:
        return host_state.num_io_ops
