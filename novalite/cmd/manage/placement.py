"""``novalite-manage placement``."""
from __future__ import annotations


class PlacementCommands:
    """Placement: allocations healed, audited, aggregates mirrored."""
