"""AggregateImagePropertiesIsolation on hand-built aggregates."""
from __future__ import annotations

from novalite.conf import CONF
from novalite.scheduler.filters.aggregate_image_properties_isolation import (
    AggregateImagePropertiesIsolation,
)
from tests.unit.scheduler import fakes

FILTER = AggregateImagePropertiesIsolation()
WINDOWS = fakes.host('win', aggregates=[fakes.aggregate('w', os_distro='windows',
                                                        **{'ns.tier': 'gold'})])


def test_matching_or_absent_properties_pass():
    assert FILTER.host_passes(WINDOWS, fakes.spec(image_properties={'os_distro': 'windows'}))
    assert FILTER.host_passes(WINDOWS, fakes.spec(image_properties={}))
    assert FILTER.host_passes(fakes.host('plain'),
                              fakes.spec(image_properties={'os_distro': 'ubuntu'}))


def test_different_value_fails():
    assert not FILTER.host_passes(WINDOWS, fakes.spec(image_properties={'os_distro': 'ubuntu'}))


def test_namespace_restricts_the_keys_compared():
    CONF.set_override('aggregate_image_properties_isolation_namespace', 'ns',
                      group='filter_scheduler')
    try:
        assert FILTER.host_passes(WINDOWS, fakes.spec(image_properties={'os_distro': 'ubuntu'}))
        assert not FILTER.host_passes(WINDOWS, fakes.spec(image_properties={'ns.tier': 'iron'}))
    finally:
        CONF.clear_override('aggregate_image_properties_isolation_namespace',
                            group='filter_scheduler')
