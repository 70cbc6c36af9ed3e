"""IoOpsWeigher: prefers idle hosts by default."""
from __future__ import annotations

from tests.unit.scheduler import fakes


def test_idle_host_first_by_default(override):
    hosts = [fakes.host('busy', num_io_ops=3), fakes.host('idle', num_io_ops=0),
             fakes.host('some', num_io_ops=1)]
    assert [w.obj.host for w in fakes.order(['IoOpsWeigher'], hosts)] == ['idle', 'some', 'busy']
    override('io_ops_weight_multiplier', 1.0)
    assert [w.obj.host for w in fakes.order(['IoOpsWeigher'], hosts)] == ['busy', 'some', 'idle']
