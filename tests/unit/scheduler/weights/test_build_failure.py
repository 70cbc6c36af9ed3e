"""BuildFailureWeigher: a failing host goes last, whatever RAM says."""
from __future__ import annotations

from tests.unit.scheduler import fakes


def test_failing_host_is_last_despite_more_free_ram(override):
    hosts = [fakes.host('broken', free_ram_mb=64000, failed_builds=3),
             fakes.host('fine', free_ram_mb=1024, failed_builds=0)]
    assert [w.obj.host for w in fakes.order(['RAMWeigher', 'BuildFailureWeigher'], hosts)] == [
        'fine', 'broken']
    override('build_failure_weight_multiplier', 0.0)
    assert [w.obj.host for w in fakes.order(['RAMWeigher', 'BuildFailureWeigher'], hosts)] == [
        'broken', 'fine']
