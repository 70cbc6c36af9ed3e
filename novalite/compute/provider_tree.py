"""The compute host's view of its resource providers: inventory and traits per node.

The resource tracker hands a ``ProviderTree`` to the driver's ``update_provider_tree``
and pushes to Placement only what changed since the last push.
"""
from __future__ import annotations

import copy
import dataclasses

# The os-traits name of a provider whose compute service is disabled (the scheduler
# forbids it); spelled out so neither side needs that library.
COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED'


@dataclasses.dataclass
class ProviderData:
    uuid: str
    name: str
    inventory: dict[str, dict] = dataclasses.field(default_factory=dict)
    traits: set[str] = dataclasses.field(default_factory=set)


class ProviderTree:
    """Providers by name (the node name of the root provider of each compute node)."""

    def __init__(self) -> None:
        self._providers: dict[str, ProviderData] = {}

    def new_root(self, name: str, uuid: str) -> ProviderData:
        data = self._providers.get(name)
        if data is None:
            data = self._providers[name] = ProviderData(uuid=uuid, name=name)
        return data

    def data(self, name: str) -> ProviderData:
        return copy.deepcopy(self._providers[name])

    def exists(self, name: str) -> bool:
        return name in self._providers

    def update_inventory(self, name: str, inventory: dict[str, dict]) -> bool:
        """Replace the inventory; True when it changed."""
        data = self._providers[name]
        if data.inventory == inventory:
            return False
        data.inventory = copy.deepcopy(inventory)
        return True

    def update_traits(self, name: str, traits: set[str]) -> bool:
        data = self._providers[name]
        if data.traits == set(traits):
            return False
        data.traits = set(traits)
        return True
