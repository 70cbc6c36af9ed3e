"""NumInstancesFilter against [filter_scheduler] max_instances_per_host."""
from __future__ import annotations

from novalite.conf import CONF
from novalite.scheduler.filters.num_instances_filter import NumInstancesFilter
from tests.unit.scheduler import fakes

FILTER = NumInstancesFilter()


def test_limit():
    CONF.set_override('max_instances_per_host', 2, group='filter_scheduler')
    try:
        assert FILTER.host_passes(fakes.host(instances=['a']), fakes.spec())
        assert not FILTER.host_passes(fakes.host(instances=['a', 'b']), fakes.spec())
    finally:
        CONF.clear_override('max_instances_per_host', group='filter_scheduler')


def test_default_is_fifty():
    assert FILTER.host_passes(fakes.host(num_instances=49), fakes.spec())
    assert not FILTER.host_passes(fakes.host(num_instances=50), fakes.spec())
