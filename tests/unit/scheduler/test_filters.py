"""Host filters, their handler, and the service liveness they rely on."""
from __future__ import annotations

import datetime

import pytest
from oslo_utils import timeutils

from novalite import objects
from novalite.conf import CONF
from novalite.scheduler import filters
from novalite.scheduler.filters import availability_zone_filter, compute_filter
from novalite.servicegroup import api as servicegroup_api
from tests.unit.scheduler import fakes

objects.register_all()


def _service(seconds_ago=0, disabled=False, forced_down=False):
    return objects.Service(host='h', binary='novalite-compute', disabled=disabled,
                           forced_down=forced_down, disabled_reason=None,
                           last_seen_up=timeutils.utcnow(with_timezone=True)
                           - datetime.timedelta(seconds=seconds_ago))


def _host(name='h1', service=None, zone=None):
    aggregates = [fakes.aggregate(availability_zone=zone)] if zone else []
    state = fakes.host(name, aggregates=aggregates)
    state.service = service if service is not None else _service()
    return state


def _spec(zone=None):
    return objects.RequestSpec(availability_zone=zone)


@pytest.mark.parametrize('seconds_ago, forced_down, up', [
    (0, False, True), (50, False, True), (70, False, False), (0, True, False)])
def test_service_is_up_within_service_down_time(seconds_ago, forced_down, up):
    service = _service(seconds_ago=seconds_ago, forced_down=forced_down)
    assert servicegroup_api.API().service_is_up(service) is up


def test_service_is_up_falls_back_to_updated_at_then_created_at():
    old = timeutils.utcnow(with_timezone=True) - datetime.timedelta(hours=1)
    recent = timeutils.utcnow(with_timezone=True)
    api = servicegroup_api.API()

    assert api.service_is_up(objects.Service(last_seen_up=None, updated_at=recent,
                                             created_at=old))
    assert not api.service_is_up(objects.Service(last_seen_up=None, updated_at=None,
                                                 created_at=old))
    assert not api.service_is_up(objects.Service())


def test_service_down_time_is_read_from_config():
    CONF.set_override('service_down_time', 200)
    try:
        assert servicegroup_api.API().service_is_up(_service(seconds_ago=150))
    finally:
        CONF.clear_override('service_down_time')


def test_compute_filter():
    host_filter = compute_filter.ComputeFilter()
    spec = _spec()

    assert host_filter.host_passes(_host(), spec)
    assert not host_filter.host_passes(_host(service=_service(disabled=True)), spec)
    assert not host_filter.host_passes(_host(service=_service(seconds_ago=3600)), spec)
    no_service = _host()
    no_service.service = None
    assert not host_filter.host_passes(no_service, spec)


def test_availability_zone_filter_reads_the_aggregates_zone():
    host_filter = availability_zone_filter.AvailabilityZoneFilter()

    assert host_filter.host_passes(_host(zone='az1'), _spec())
    assert host_filter.host_passes(_host(zone='az1'), _spec('az1'))
    assert not host_filter.host_passes(_host(zone='az1'), _spec('az2'))
    # A host in two zoned aggregates is in both.
    two = fakes.host(aggregates=[fakes.aggregate('a', availability_zone='az1'),
                                 fakes.aggregate('b', availability_zone='az2'),
                                 fakes.aggregate('c', ssd='true')])
    assert host_filter.host_passes(two, _spec('az2'))
    assert two.availability_zone == 'az1,az2'


def test_availability_zone_filter_falls_back_to_the_default_zone():
    host_filter = availability_zone_filter.AvailabilityZoneFilter()
    unzoned = fakes.host(aggregates=[fakes.aggregate(ssd='true')])

    assert unzoned.availability_zone == 'nova'
    assert host_filter.host_passes(unzoned, _spec('nova'))
    assert not host_filter.host_passes(unzoned, _spec('az1'))
    CONF.set_override('default_availability_zone', 'az1')
    try:
        assert host_filter.host_passes(unzoned, _spec('az1'))
    finally:
        CONF.clear_override('default_availability_zone')


def test_handler_loads_filters_by_name_in_order():
    handler = filters.HostFilterHandler(['AvailabilityZoneFilter', 'ComputeFilter'])

    assert [type(f).__name__ for f in handler.filters] == ['AvailabilityZoneFilter',
                                                          'ComputeFilter']


def test_handler_defaults_to_enabled_filters():
    CONF.set_override('enabled_filters', ['ComputeFilter'], group='filter_scheduler')
    try:
        handler = filters.HostFilterHandler()
    finally:
        CONF.clear_override('enabled_filters', group='filter_scheduler')

    assert [type(f).__name__ for f in handler.filters] == ['ComputeFilter']


def test_handler_refuses_unknown_filter():
    with pytest.raises(ValueError, match='NoSuchFilter'):
        filters.HostFilterHandler(['ComputeFilter', 'NoSuchFilter'])


def test_handler_reports_what_each_filter_removed():
    handler = filters.HostFilterHandler(['ComputeFilter', 'AvailabilityZoneFilter'])
    hosts = [_host('h1'), _host('h2', service=_service(disabled=True)),
             _host('h3', zone='az2')]

    passed, results = handler.get_filtered_hosts(hosts, _spec('az2'))

    assert [h.host for h in passed] == ['h3']
    assert [(r.name, r.hosts_in, r.hosts_out) for r in results] == [
        ('ComputeFilter', 3, 2), ('AvailabilityZoneFilter', 2, 1)]


def test_explain_filtered_out_names_the_filters_that_removed_hosts():
    handler = filters.HostFilterHandler(['ComputeFilter', 'AvailabilityZoneFilter'])
    hosts = [_host('h1'), _host('h2', service=_service(disabled=True))]

    passed, results = handler.get_filtered_hosts(hosts, _spec('az2'))

    assert passed == []
    assert filters.explain_filtered_out(results) == (
        'There are not enough hosts available. ComputeFilter removed 1 of 2 hosts, '
        'AvailabilityZoneFilter removed 1 of 1 hosts.')
