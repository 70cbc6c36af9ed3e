"""ServerGroupSoftAffinityWeigher: hosts with more members of the group first."""
from __future__ import annotations

from tests.unit.scheduler import fakes


def _hosts():
    return [fakes.host('none'), fakes.host('two', instances=['m1', 'm2', 'x']),
            fakes.host('one', instances=['m3'])]


def test_prefers_hosts_with_members():
    spec = fakes.spec(instance_group=fakes.group('soft-affinity', members=['m1', 'm2', 'm3']))
    weighed = fakes.order(['ServerGroupSoftAffinityWeigher'], _hosts(), spec)
    assert [(w.obj.host, w.weight) for w in weighed] == [('two', 1.0), ('one', 0.5),
                                                          ('none', 0.0)]


def test_other_policy_or_no_group_weighs_nothing():
    for spec in (fakes.spec(),
                 fakes.spec(instance_group=fakes.group('soft-anti-affinity',
                                                       members=['m1']))):
        assert {w.weight for w in fakes.order(['ServerGroupSoftAffinityWeigher'], _hosts(),
                                        spec)} == {0.0}


def test_multiplier(override):
    override('soft_affinity_weight_multiplier', 3.0)
    spec = fakes.spec(instance_group=fakes.group('soft-affinity', members=['m1']))
    assert fakes.order(['ServerGroupSoftAffinityWeigher'], _hosts(), spec)[0].weight == 3.0
