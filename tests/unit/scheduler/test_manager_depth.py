"""Scheduling with the full filter and weigher set, on the real Placement and a SQLite cell:
spreading, server groups, aggregates, and what a request costs in queries."""
from __future__ import annotations

import collections
import uuid

import pytest
from sqlalchemy import event

from novalite import exception, objects
from novalite.conf import CONF
from novalite.db import engine
from novalite.scheduler import manager

HOSTS = ('h1', 'h2', 'h3', 'h4')


def _spec(memory_mb=512, group=None, availability_zone=None, num_instances=1):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=memory_mb, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    hints = {'group': [group.uuid]} if group is not None else {}
    return objects.RequestSpec(instance_uuid=str(uuid.uuid4()), flavor=flavor,
                               num_instances=num_instances, project_id='p1', user_id='u1',
                               availability_zone=availability_zone, scheduler_hints=hints)


@pytest.fixture
def scheduler(cloud):
    for name in HOSTS:
        cloud.add_host(name)
    return manager.SchedulerManager(reportclient=cloud.reportclient)


@pytest.fixture
def override():
    names = []

    def set_(name, value):
        CONF.set_override(name, value, group='filter_scheduler')
        names.append(name)

    yield set_
    for name in names:
        CONF.clear_override(name, group='filter_scheduler')


def _boot(cloud, scheduler, spec, group=None):
    """Schedule one server as the API and conductor would: join the group first, then
    create the instance on the chosen host. Returns the host."""
    instance = str(uuid.uuid4())
    if group is not None:
        objects.InstanceGroup.add_members(cloud.context, group.uuid, [instance])
    [[selection]] = scheduler.select_destinations(cloud.context, spec, [instance])
    cloud.add_instance(selection.service_host, instance)
    return selection.service_host


def _group(cloud, policy, **kwargs):
    group = objects.InstanceGroup(cloud.context, name=policy, project_id='p1', user_id='u1',
                                  policy=policy, **kwargs)
    group.create()
    return group


def test_twenty_servers_spread_evenly_over_four_hosts(cloud, scheduler):
    hosts = [_boot(cloud, scheduler, _spec()) for _ in range(20)]

    counts = collections.Counter(hosts)
    assert set(counts) == set(HOSTS)
    assert max(counts.values()) - min(counts.values()) <= 1


def test_num_instances_weigher_spreads_by_the_cells_instance_counts(cloud, scheduler,
                                                                    override):
    # Only the instance counts decide: they come from the cell, not from Placement.
    for name in ('ram_weight_multiplier', 'cpu_weight_multiplier', 'disk_weight_multiplier'):
        override(name, 0.0)
    override('num_instances_weight_multiplier', -1.0)
    for name, count in (('h1', 3), ('h2', 2), ('h3', 1)):
        for _ in range(count):
            cloud.add_instance(name)

    hosts = [_boot(cloud, scheduler, _spec()) for _ in range(6)]

    # Each server goes to a host with the fewest instances: h4 first, then all level.
    assert hosts[0] == 'h4'
    assert collections.Counter(hosts) == {'h2': 1, 'h3': 2, 'h4': 3}


def test_io_ops_weigher_avoids_the_host_that_is_building(cloud, scheduler, override):
    for name in ('ram_weight_multiplier', 'cpu_weight_multiplier', 'disk_weight_multiplier'):
        override(name, 0.0)
    for name in ('h1', 'h2', 'h3'):
        cloud.add_instance(name, vm_state='building')
    cloud.add_instance('h4', vm_state='active')

    assert _boot(cloud, scheduler, _spec()) == 'h4'


def test_anti_affinity_group_spreads_then_fails_naming_the_filter(cloud, scheduler):
    group = _group(cloud, 'anti-affinity')

    hosts = [_boot(cloud, scheduler, _spec(group=group), group) for _ in range(4)]

    assert sorted(hosts) == sorted(HOSTS)
    with pytest.raises(exception.NoValidHost) as info:
        _boot(cloud, scheduler, _spec(group=group), group)
    assert str(info.value) == ('No valid host was found. There are not enough hosts '
                               'available. ServerGroupAntiAffinityFilter removed 4 of 4 '
                               'hosts.')


def test_anti_affinity_max_server_per_host(cloud, scheduler):
    group = _group(cloud, 'anti-affinity', rules={'max_server_per_host': 2})

    hosts = [_boot(cloud, scheduler, _spec(group=group), group) for _ in range(8)]

    assert collections.Counter(hosts) == {h: 2 for h in HOSTS}


def test_affinity_group_puts_all_on_one_host(cloud, scheduler):
    group = _group(cloud, 'affinity')

    hosts = [_boot(cloud, scheduler, _spec(group=group), group) for _ in range(5)]

    assert len(set(hosts)) == 1


def test_one_multi_create_request_honours_the_group(cloud, scheduler):
    anti = _group(cloud, 'anti-affinity')
    uuids = [str(uuid.uuid4()) for _ in range(4)]
    objects.InstanceGroup.add_members(cloud.context, anti.uuid, uuids)

    result = scheduler.select_destinations(cloud.context, _spec(group=anti, num_instances=4),
                                           uuids)

    assert sorted(s[0].service_host for s in result) == sorted(HOSTS)
    affinity = _group(cloud, 'affinity')
    uuids = [str(uuid.uuid4()) for _ in range(3)]
    result = scheduler.select_destinations(
        cloud.context, _spec(group=affinity, num_instances=3), uuids)
    assert len({s[0].service_host for s in result}) == 1


def test_soft_anti_affinity_spreads_without_refusing(cloud, scheduler, override):
    for name in ('ram_weight_multiplier', 'cpu_weight_multiplier', 'disk_weight_multiplier'):
        override(name, 0.0)
    group = _group(cloud, 'soft-anti-affinity')

    hosts = [_boot(cloud, scheduler, _spec(group=group), group) for _ in range(6)]

    assert sorted(hosts[:4]) == sorted(HOSTS)
    assert collections.Counter(hosts).most_common(1)[0][1] == 2


def test_group_policy_needing_a_disabled_filter_is_refused(cloud, override):
    cloud.add_host('h1')
    override('enabled_filters', ['ComputeFilter'])
    scheduler = manager.SchedulerManager(reportclient=cloud.reportclient)
    group = _group(cloud, 'affinity')

    with pytest.raises(exception.NoValidHost, match='needs ServerGroupAffinityFilter'):
        _boot(cloud, scheduler, _spec(group=group), group)


def test_unknown_group_is_refused(cloud, scheduler):
    spec = _spec()
    spec.scheduler_hints = {'group': [str(uuid.uuid4())]}

    with pytest.raises(exception.NoValidHost, match='Instance group .* could not be found'):
        scheduler.select_destinations(cloud.context, spec, [str(uuid.uuid4())])


def test_zone_comes_from_the_aggregates(cloud, scheduler):
    zone = objects.Aggregate(cloud.context, name='az1', metadata={'availability_zone': 'az1'})
    zone.create()
    zone.add_host('h3')

    [[selection]] = scheduler.select_destinations(
        cloud.context, _spec(availability_zone='az1'), [str(uuid.uuid4())])
    assert (selection.service_host, selection.availability_zone) == ('h3', 'az1')
    [[selection]] = scheduler.select_destinations(
        cloud.context, _spec(availability_zone='nova'), [str(uuid.uuid4())])
    assert selection.service_host != 'h3'
    assert selection.availability_zone == 'nova'


def _count_statements(url):
    counter = collections.Counter()

    def count(*_args):
        counter['n'] += 1
    event.listen(engine.get_engine(url), 'before_cursor_execute', count)
    event.listen(engine.get_engine(url, writer=False), 'before_cursor_execute', count)
    return counter


def test_host_states_cost_the_same_queries_for_two_hosts_or_twelve(cloud, tmp_path):
    host_manager = manager.SchedulerManager(reportclient=cloud.reportclient).host_manager
    api = _count_statements(CONF.api_database.connection)
    cell = _count_statements(cloud.cell.database_connection)

    def states(names):
        uuids = [cloud.add_host(n) for n in names]
        for name in names:
            cloud.add_instance(name)
        agg = objects.Aggregate(cloud.context, name='a-%s' % names[0], metadata={})
        agg.create()
        for name in names:
            agg.add_host(name)
        host_manager.forget()  # what the API's fanout cast does for aggregates
        api.clear()
        cell.clear()
        found = host_manager.get_host_states_by_uuids(cloud.context, uuids, {},
                                                      objects.RequestSpec(cloud.context))
        assert [s.num_instances for s in found] == [1] * len(names)
        assert all(s.instances == set() for s in found)  # counted, not listed
        return api['n'], cell['n']

    small = states(['s%d' % i for i in range(2)])
    large = states(['l%d' % i for i in range(12)])

    assert small == large
    assert small[0] > 0


def test_cells_and_aggregates_are_read_once_until_forgotten(cloud):
    host_manager = manager.SchedulerManager(reportclient=cloud.reportclient).host_manager
    uuids = [cloud.add_host('h1'), cloud.add_host('h2')]
    api = _count_statements(CONF.api_database.connection)
    host_manager.get_host_states_by_uuids(cloud.context, uuids, {})
    api.clear()
    found = host_manager.get_host_states_by_uuids(cloud.context, uuids, {})
    assert api['n'] == 0
    assert [s.aggregates for s in found] == [[], []]

    agg = objects.Aggregate(cloud.context, name='late', metadata={})
    agg.create()
    agg.add_host('h1')
    # What the API's update_aggregates fanout cast makes the scheduler do.
    manager.SchedulerManager(reportclient=cloud.reportclient,
                             host_manager_=host_manager).update_aggregates(
        cloud.context, [agg])
    found = {s.host: s for s in host_manager.get_host_states_by_uuids(
        cloud.context, uuids, {})}
    assert [a.name for a in found['h1'].aggregates] == ['late']
    assert api['n'] > 0


def test_instances_are_listed_when_a_filter_asks_which(cloud):
    host_manager = manager.SchedulerManager(reportclient=cloud.reportclient).host_manager
    uuid = cloud.add_host('h1')
    instance_uuid = cloud.add_instance('h1')
    cloud.add_instance('h1', vm_state='building')
    spec = objects.RequestSpec(cloud.context, scheduler_hints={
        'different_host': [instance_uuid]})
    listed = host_manager.get_host_states_by_uuids(cloud.context, [uuid], {}, spec)[0]
    assert instance_uuid in listed.instances and len(listed.instances) == 2
    counted = host_manager.get_host_states_by_uuids(cloud.context, [uuid], {},
                                                    objects.RequestSpec(cloud.context))[0]
    assert (listed.num_instances, listed.num_io_ops) == (2, 1)
    assert (counted.num_instances, counted.num_io_ops) == (2, 1)


def test_no_cell_answering_is_an_outage_not_no_valid_host(cloud, monkeypatch):
    """With the cell database refusing connections, the scheduler said "Placement
    offered 2 resource providers, but none is a compute node of an enabled cell": a
    NoValidHost the conductor does not retry. It is an outage, retried until it ends."""
    from oslo_db import exception as db_exc

    from novalite import transient
    from novalite.scheduler import host_manager as host_manager_module
    host_manager = manager.SchedulerManager(reportclient=cloud.reportclient).host_manager
    uuids = [cloud.add_host('h1'), cloud.add_host('h2')]

    def refused(*args, **kwargs):
        raise db_exc.DBConnectionError('Connection refused')
    monkeypatch.setattr(host_manager_module, '_cell_hosts', refused)
    with pytest.raises(exception.CellUnavailable) as caught:
        host_manager.get_host_states_by_uuids(cloud.context, uuids, {})
    assert transient.is_transient(caught.value)
