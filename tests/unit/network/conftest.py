"""Fixtures of the network unit tests: the Neutron test double."""
from __future__ import annotations

from tests.unit.network.neutron_double import neutron  # noqa: F401  (a fixture)
