"""Weight multipliers overridden by aggregate metadata."""
from __future__ import annotations

from novalite.scheduler import weights
from tests.unit.scheduler import fakes


def test_config_value_without_aggregate_metadata(override):
    override('ram_weight_multiplier', 2.5)
    assert weights.aggregate_multiplier(fakes.host(), 'ram_weight_multiplier') == 2.5


def test_smallest_aggregate_value_wins_and_bad_values_are_ignored():
    host = fakes.host(aggregates=[fakes.aggregate('a', ram_weight_multiplier='3'),
                                  fakes.aggregate('b', ram_weight_multiplier='-1.5'),
                                  fakes.aggregate('c', ram_weight_multiplier='lots')])
    assert weights.aggregate_multiplier(host, 'ram_weight_multiplier') == -1.5


def test_aggregate_turns_spreading_into_stacking_for_its_hosts():
    stacking = [fakes.aggregate('stack', ram_weight_multiplier='-1.0')]
    hosts = [fakes.host('full', free_ram_mb=1000, aggregates=stacking),
             fakes.host('empty', free_ram_mb=9000, aggregates=stacking)]
    assert [w.obj.host for w in fakes.order(['RAMWeigher'], hosts)] == ['full', 'empty']
