"""DifferentHostFilter on hand-built host states."""
from __future__ import annotations

from novalite.scheduler.filters.different_host_filter import DifferentHostFilter
from tests.unit.scheduler import fakes

FILTER = DifferentHostFilter()


def test_without_hint_every_host_passes():
    assert FILTER.host_passes(fakes.host('h1', instances=['i1']), fakes.spec())


def test_hosts_running_a_named_instance_fail():
    spec = fakes.spec(hints={'different_host': ['i1', 'i2']})
    assert not FILTER.host_passes(fakes.host('h1', instances=['i1']), spec)
    assert not FILTER.host_passes(fakes.host('h2', instances=['x', 'i2']), spec)
    assert FILTER.host_passes(fakes.host('h3', instances=['x']), spec)
