"""``novalite-manage capacity``: how many more servers of a flavor fit, and where."""
from __future__ import annotations


class CapacityCommands:
    """How many more servers of a flavor fit, on which hosts, and what limits each."""

    direct = True

    def __call__(self) -> int:
        """How many more servers of a flavor fit, on which hosts, and what limits each."""
        return 0
