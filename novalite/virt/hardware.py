"""What the hypervisor reports about an instance (``InstanceInfo``)."""
from __future__ import annotations

import dataclasses

from novalite.compute import power_state


@dataclasses.dataclass
class InstanceInfo:
    state: int = power_state.NOSTATE
    internal_id: str | None = None
