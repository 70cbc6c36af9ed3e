"""AggregateInstanceExtraSpecsFilter on hand-built aggregates."""
from __future__ import annotations

from novalite.scheduler.filters.aggregate_instance_extra_specs_filter import (
    AggregateInstanceExtraSpecsFilter,
)
from tests.unit.scheduler import fakes

FILTER = AggregateInstanceExtraSpecsFilter()
SSD = fakes.host('ssd', aggregates=[fakes.aggregate('fast', ssd='true', cores='16'),
                                    fakes.aggregate('zone', availability_zone='az1')])
PLAIN = fakes.host('plain')


def test_no_extra_specs_pass_everywhere():
    assert FILTER.host_passes(PLAIN, fakes.spec())


def test_scoped_key_needs_matching_aggregate_metadata():
    spec = fakes.spec({'aggregate_instance_extra_specs:ssd': 'true'})
    assert FILTER.host_passes(SSD, spec)
    assert not FILTER.host_passes(PLAIN, spec)
    assert not FILTER.host_passes(SSD, fakes.spec({'aggregate_instance_extra_specs:ssd':
                                                   'false'}))


def test_operators_apply_to_metadata_values():
    assert FILTER.host_passes(SSD, fakes.spec({'aggregate_instance_extra_specs:cores': '>= 8'}))
    assert not FILTER.host_passes(SSD, fakes.spec({'aggregate_instance_extra_specs:cores':
                                                   '>= 32'}))


def test_unscoped_keys_are_matched_and_other_scopes_ignored():
    assert FILTER.host_passes(SSD, fakes.spec({'ssd': 'true', 'hw:cpu_policy': 'dedicated'}))
    assert not FILTER.host_passes(PLAIN, fakes.spec({'ssd': 'true'}))
    assert FILTER.host_passes(PLAIN, fakes.spec({'capabilities:x': '1', 'resources:VCPU': '1'}))
