"""Fixtures of the network unit tests: the Neutron test double."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.network import neutron_double
from tests.unit.network.neutron_double import NeutronDouble


@pytest.fixture
def neutron() -> Iterator[NeutronDouble]:
    with neutron_double.installed() as double:
        yield double
