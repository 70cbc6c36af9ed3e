"""NumInstancesWeigher: ignored by default, spreads or stacks with its multiplier."""
from __future__ import annotations

from tests.unit.scheduler import fakes


def test_ignored_by_default(override):
    hosts = [fakes.host('busy', num_instances=5), fakes.host('idle', num_instances=1)]
    assert [w.weight for w in fakes.order(['NumInstancesWeigher'], hosts)] == [0.0, 0.0]


def test_negative_spreads_positive_stacks(override):
    hosts = [fakes.host('busy', num_instances=5), fakes.host('idle', num_instances=1)]
    override('num_instances_weight_multiplier', -1.0)
    assert [w.obj.host for w in fakes.order(['NumInstancesWeigher'], hosts)] == ['idle', 'busy']
    override('num_instances_weight_multiplier', 2.0)
    weighed = fakes.order(['NumInstancesWeigher'], hosts)
    assert [(w.obj.host, w.weight) for w in weighed] == [('busy', 2.0), ('idle', 0.0)]
