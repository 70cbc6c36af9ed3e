"""ServerGroupAntiAffinityFilter, with and without max_server_per_host."""
from __future__ import annotations

from novalite.scheduler.filters.server_group_anti_affinity_filter import (
    ServerGroupAntiAffinityFilter,
)
from tests.unit.scheduler import fakes

FILTER = ServerGroupAntiAffinityFilter()


def test_no_group_or_other_policy_passes():
    assert FILTER.host_passes(fakes.host('h1', instances=['m1']), fakes.spec())
    group = fakes.group('affinity', members=['m1'], hosts=['h1'])
    assert FILTER.host_passes(fakes.host('h1', instances=['m1']),
                              fakes.spec(instance_group=group))


def test_host_with_a_member_fails():
    group = fakes.group('anti-affinity', members=['m1', 'm2'], hosts=['h1'])
    spec = fakes.spec(instance_group=group)
    assert not FILTER.host_passes(fakes.host('h1', instances=['m1', 'other']), spec)
    assert FILTER.host_passes(fakes.host('h2', instances=['other']), spec)


def test_max_server_per_host_rule():
    group = fakes.group('anti-affinity', members=['m1', 'm2', 'm3'],
                        rules={'max_server_per_host': 2})
    spec = fakes.spec(instance_group=group)
    assert FILTER.host_passes(fakes.host('h1', instances=['m1']), spec)
    assert not FILTER.host_passes(fakes.host('h1', instances=['m1', 'm2']), spec)


def test_host_already_running_the_instance_passes():
    moving = '9d1f1f6e-8a51-4a43-9d47-0c1d3b1e0c11'
    group = fakes.group('anti-affinity', members=[moving])
    spec = fakes.spec(instance_group=group, instance_uuid=moving)
    assert FILTER.host_passes(fakes.host('h1', instances=[moving]), spec)
