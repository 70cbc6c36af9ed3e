"""The network API the compute host calls while building.

Without Neutron there is nothing to allocate: "none", "auto" and an absent request
all give an instance no ports. A list of networks is refused by the compute API
until the Neutron client lands.
"""
from __future__ import annotations

from typing import Any


class API:
    def needs_allocation(self, requested_networks: Any) -> bool:
        """Whether a build has ports to allocate (without Neutron: never)."""
        return False

    def allocate_for_instance(self, context: Any, instance: Any,
                              requested_networks: Any) -> list[dict]:
        """Ports for the instance, as Nova's network_info (a list of VIFs)."""
        return []

    def deallocate_for_instance(self, context: Any, instance: Any) -> None:
        """Release the instance's ports."""
