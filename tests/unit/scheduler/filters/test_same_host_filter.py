"""SameHostFilter on hand-built host states."""
from __future__ import annotations

from novalite.scheduler.filters.same_host_filter import SameHostFilter
from tests.unit.scheduler import fakes

FILTER = SameHostFilter()


def test_without_hint_every_host_passes():
    assert FILTER.host_passes(fakes.host('h1'), fakes.spec())


def test_only_hosts_running_a_named_instance_pass():
    one = fakes.spec(hints={'same_host': 'i1'})
    several = fakes.spec(hints={'same_host': ['i9', 'i2']})
    assert FILTER.host_passes(fakes.host('h1', instances=['i1']), one)
    assert not FILTER.host_passes(fakes.host('h2', instances=['i2']), one)
    assert FILTER.host_passes(fakes.host('h2', instances=['i2']), several)
