"""ServerGroupAffinityFilter on hand-built host states."""
from __future__ import annotations

from novalite.scheduler.filters.server_group_affinity_filter import ServerGroupAffinityFilter
from tests.unit.scheduler import fakes

FILTER = ServerGroupAffinityFilter()


def test_no_group_or_other_policy_passes():
    assert FILTER.host_passes(fakes.host('h2'), fakes.spec())
    group = fakes.group('anti-affinity', members=['m1'], hosts=['h1'])
    assert FILTER.host_passes(fakes.host('h2'), fakes.spec(instance_group=group))


def test_first_member_goes_anywhere():
    group = fakes.group('affinity', members=['m1'], hosts=[])
    assert FILTER.host_passes(fakes.host('h2'), fakes.spec(instance_group=group))


def test_later_members_only_on_the_groups_host():
    group = fakes.group('affinity', members=['m1'], hosts=['h1'])
    spec = fakes.spec(instance_group=group)
    assert FILTER.host_passes(fakes.host('h1', instances=['m1']), spec)
    assert not FILTER.host_passes(fakes.host('h2'), spec)
