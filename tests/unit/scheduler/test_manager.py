"""SchedulerManager.select_destinations on the real Placement and a SQLite cell."""
from __future__ import annotations

import uuid

import pytest

from novalite import exception, objects
from novalite.conf import CONF
from novalite.scheduler import manager


def _spec(memory_mb=1024, vcpus=1, root_gb=10, num_instances=1, availability_zone=None):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=memory_mb, vcpus=vcpus,
                            root_gb=root_gb, ephemeral_gb=0, swap=0, extra_specs={})
    return objects.RequestSpec(instance_uuid=str(uuid.uuid4()), flavor=flavor,
                               num_instances=num_instances, project_id='p1', user_id='u1',
                               availability_zone=availability_zone)


@pytest.fixture
def scheduler(cloud):
    return manager.SchedulerManager(reportclient=cloud.reportclient)


def test_selects_the_host_with_most_free_ram_claims_and_returns_alternates(cloud, scheduler):
    cloud.add_host('small', memory_mb=8192)
    big = cloud.add_host('big', memory_mb=16384)
    instance = str(uuid.uuid4())

    [selections] = scheduler.select_destinations(cloud.context, _spec(), [instance],
                                                 return_alternates=True)

    assert [s.service_host for s in selections] == ['big', 'small']
    assert selections[0].compute_node_uuid == big
    assert selections[0].cell_uuid == cloud.cell.uuid
    assert selections[0].availability_zone == CONF.default_availability_zone
    assert cloud.reportclient.get_allocations_for_consumer(cloud.context, instance) == {
        big: {'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}}
    # The alternate carries its own (unclaimed) allocation request.
    assert selections[1].allocation_request is not None
    assert cloud.reportclient.get_allocations_for_resource_provider(
        cloud.context, selections[1].compute_node_uuid) == {}


def test_alternates_are_capped_by_max_attempts(cloud, scheduler):
    for name in ('h1', 'h2', 'h3', 'h4'):
        cloud.add_host(name)
    CONF.set_override('max_attempts', 2, group='scheduler')
    try:
        [selections] = scheduler.select_destinations(cloud.context, _spec(),
                                                     [str(uuid.uuid4())],
                                                     return_alternates=True)
    finally:
        CONF.clear_override('max_attempts', group='scheduler')

    assert len(selections) == 2


def test_instances_of_one_request_spread(cloud, scheduler):
    cloud.add_host('h1')
    cloud.add_host('h2')
    uuids = [str(uuid.uuid4()), str(uuid.uuid4())]

    result = scheduler.select_destinations(cloud.context, _spec(memory_mb=4096), uuids)

    assert sorted(s[0].service_host for s in result) == ['h1', 'h2']
    assert [len(s) for s in result] == [1, 1]


def test_flavor_too_big_names_the_resource(cloud, scheduler):
    cloud.add_host('h1', memory_mb=16384)
    cloud.add_host('h2', memory_mb=8192)

    with pytest.raises(exception.NoValidHost) as info:
        scheduler.select_destinations(cloud.context, _spec(memory_mb=999999),
                                      [str(uuid.uuid4())])

    assert str(info.value) == (
        'No valid host was found. Placement found no resource provider with enough '
        'MEMORY_MB: requested 999999, the most free on any provider is 15872 '
        '(2 providers checked).')


def test_down_service_names_compute_filter(cloud, scheduler):
    cloud.add_host('h1', up=False)
    cloud.add_host('h2')
    cloud.stop_heartbeats('h2')

    with pytest.raises(exception.NoValidHost) as info:
        scheduler.select_destinations(cloud.context, _spec(), [str(uuid.uuid4())])

    assert str(info.value) == ('No valid host was found. There are not enough hosts '
                               'available. ComputeFilter removed 2 of 2 hosts.')


def test_disabled_provider_is_skipped_by_placement(cloud, scheduler):
    disabled = cloud.add_host('h1')
    cloud.reportclient.set_traits_for_provider(cloud.context, disabled,
                                               ['COMPUTE_STATUS_DISABLED'])
    cloud.add_host('h2', memory_mb=1024)

    [selections] = scheduler.select_destinations(cloud.context, _spec(memory_mb=256),
                                                 [str(uuid.uuid4())], return_alternates=True)
    assert [s.service_host for s in selections] == ['h2']

    with pytest.raises(exception.NoValidHost, match='excluded by traits.*'
                       'has COMPUTE_STATUS_DISABLED'):
        scheduler.select_destinations(cloud.context, _spec(memory_mb=4096),
                                      [str(uuid.uuid4())])


def test_failure_of_a_later_instance_frees_earlier_claims(cloud, scheduler):
    host = cloud.add_host('h1', memory_mb=4096 + 512)
    uuids = [str(uuid.uuid4()), str(uuid.uuid4())]

    with pytest.raises(exception.NoValidHost, match='Only 1 of 2 instances'):
        scheduler.select_destinations(cloud.context, _spec(memory_mb=3000), uuids)

    assert cloud.reportclient.get_allocations_for_resource_provider(cloud.context, host) == {}


def test_availability_zone_filter(cloud, scheduler):
    cloud.add_host('h1')

    with pytest.raises(exception.NoValidHost, match='AvailabilityZoneFilter removed 1 of 1'):
        scheduler.select_destinations(cloud.context, _spec(availability_zone='elsewhere'),
                                      [str(uuid.uuid4())])


def test_legacy_answer_without_objects(cloud, scheduler):
    cloud.add_host('h1')

    result = scheduler.select_destinations(cloud.context, _spec(), [str(uuid.uuid4())],
                                           return_objects=False)

    assert result == [{'host': 'h1', 'nodename': 'h1', 'limits': {}}]


def test_stopped_placement_raises_connect_failure(cloud, scheduler, placement):
    cloud.add_host('h1')
    placement.stop()

    with pytest.raises(exception.PlacementAPIConnectFailure, match='could not be reached'):
        scheduler.select_destinations(cloud.context, _spec(), [str(uuid.uuid4())])


def test_no_providers_at_all(cloud, scheduler):
    with pytest.raises(exception.NoValidHost, match='Placement has no resource providers'):
        scheduler.select_destinations(cloud.context, _spec(), [str(uuid.uuid4())])


def test_a_requested_destination_is_the_only_host_and_still_filtered(cloud, scheduler):
    """A live migration's named, unforced host (Nova's Destination): only that host is
    considered, even when another has more room, and the filters still judge it (a
    forced host, force_hosts, skips them)."""
    cloud.add_host('small', memory_mb=4096)
    cloud.add_host('big', memory_mb=16384)
    spec = _spec()
    spec.requested_destination = 'small'

    [selections] = scheduler.select_destinations(cloud.context, spec, [str(uuid.uuid4())],
                                                 return_alternates=True)
    assert [s.service_host for s in selections] == ['small']

    cloud.stop_heartbeats('small')
    refused = _spec()
    refused.requested_destination = 'small'
    with pytest.raises(exception.NoValidHost) as info:
        scheduler.select_destinations(cloud.context, refused, [str(uuid.uuid4())])
    assert 'requested_destination removed 1 of 2 hosts' in str(info.value)
    assert 'ComputeFilter removed 1 of 1 hosts' in str(info.value)

    forced = _spec()
    forced.force_hosts = ['small']
    [selections] = scheduler.select_destinations(cloud.context, forced, [str(uuid.uuid4())])
    assert [s.service_host for s in selections] == ['small']
