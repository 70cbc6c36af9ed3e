"""IoOpsFilter against [filter_scheduler] max_io_ops_per_host."""
from __future__ import annotations

from novalite.conf import CONF
from novalite.scheduler.filters.io_ops_filter import IoOpsFilter
from tests.unit.scheduler import fakes

FILTER = IoOpsFilter()


def test_default_limit_is_eight():
    assert FILTER.host_passes(fakes.host(num_io_ops=7), fakes.spec())
    assert not FILTER.host_passes(fakes.host(num_io_ops=8), fakes.spec())


def test_limit_from_config():
    CONF.set_override('max_io_ops_per_host', 1, group='filter_scheduler')
    try:
        assert FILTER.host_passes(fakes.host(num_io_ops=0), fakes.spec())
        assert not FILTER.host_passes(fakes.host(num_io_ops=1), fakes.spec())
    finally:
        CONF.clear_override('max_io_ops_per_host', group='filter_scheduler')
