"""ServerGroupSoftAntiAffinityWeigher: hosts with fewer members of the group first."""
from __future__ import annotations

from tests.unit.scheduler import fakes


def test_prefers_hosts_without_members(override):
    hosts = [fakes.host('two', instances=['m1', 'm2']), fakes.host('none'),
             fakes.host('one', instances=['m3'])]
    spec = fakes.spec(instance_group=fakes.group('soft-anti-affinity',
                                                 members=['m1', 'm2', 'm3']))
    assert [w.obj.host for w in fakes.order(['ServerGroupSoftAntiAffinityWeigher'], hosts, spec)] \
        == ['none', 'one', 'two']
    # Unlike the filter, it never removes a host.
    assert len(fakes.order(['ServerGroupSoftAntiAffinityWeigher'], hosts, spec)) == 3
    override('soft_anti_affinity_weight_multiplier', 0.0)
    assert {w.weight for w in fakes.order(['ServerGroupSoftAntiAffinityWeigher'], hosts, spec)} \
        == {0.0}
