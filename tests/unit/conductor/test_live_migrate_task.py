"""The conductor's live migration task (``conductor/tasks/live_migrate.py``), as Nova's
LiveMigrationTask: a refusal (source down; a named destination unknown, down, the
source itself, of another hypervisor or an older one; a forced host without room; no
host from the scheduler; every host refusing its checks) leaves the server ACTIVE on
its host with no task and a fault, its allocation on the source only, the migration
``error`` holding nothing, the conductor's event failed; a destination that takes it
holds the instance's allocation while the migration holds the source's, and the
source is told (a cast) with the destination's zone in the migrate data."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import power_state
from novalite.conductor.tasks import build, live_migrate
from novalite.conf import CONF
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import RecordingComputeRPC, ScriptedReportClient
from tests.unit.conductor.test_migrate_task import ClaimingSchedulerDouble


class OrderedSchedulerDouble(ClaimingSchedulerDouble):
    """The scheduler choosing, in ``order``, the first host the spec does not ignore
    (only the spec's ``requested_destination`` when it names one), claiming it for
    the instance; NoValidHost when none is left (a test double)."""

    def __init__(self, reportclient, nodes, cell_uuid, order):
        super().__init__(reportclient, nodes, cell_uuid)
        self.order = list(order)
        self.chosen: list[str] = []

    def select_destinations(self, context, spec, instance_uuids, return_objects=False,
                            return_alternates=False):
        wanted = [spec.requested_destination] if spec.requested_destination else self.order
        left = [h for h in wanted if h not in (spec.ignore_hosts or [])]
        if self.error is None and not left:
            self.specs.append(spec)
            raise exception.NoValidHost(reason='no host left')
        if left:
            self.host = left[0]
            self.chosen.append(self.host)
        return super().select_destinations(context, spec, instance_uuids, return_objects,
                                           return_alternates)


class HostChecksRPC(RecordingComputeRPC):
    """The compute RPC client: the destination's check (which asks the source's)
    answers migrate data, or raises what ``refuse`` names for that host; casts are
    recorded (a test double)."""

    def __init__(self):
        super().__init__()
        self.refuse: dict[str, BaseException] = {}
        self.checked: list[str] = []

    def check_can_live_migrate_destination(self, context, instance, host, block_migration,
                                           migration):
        self.checked.append(host)
        if host in self.refuse:
            raise self.refuse[host]
        data = objects.LiveMigrateData.new(migration=migration,
                                           block_migration=block_migration)
        data.dest_host = host
        if data.block_migration is None:
            data.block_migration = True  # the source's check: no shared storage
        return data


@pytest.fixture
def lm(cloud):
    nodes = {name: cloud.add_host(name) for name in ('src', 'dst', 'dst2', 'dst3')}
    deps = build.Dependencies(
        _report=ScriptedReportClient(cloud.reportclient), _compute=HostChecksRPC(),
        _query=OrderedSchedulerDouble(cloud.reportclient, nodes, cloud.cell.uuid,
                                      ['dst', 'dst2', 'dst3']))
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield cloud, cctxt, deps, nodes


def _server(cloud, cctxt, nodes):
    """A running server on ``src``, allocated there, as the API leaves it for the
    conductor: task migrating, a live-migration action, an 'accepted' migration."""
    instance_uuid = cloud.add_instance('src', task_state='migrating')
    objects.InstanceMapping(cloud.context, instance_uuid=instance_uuid,
                            cell_mapping=cloud.cell, project_id='p1').create()
    assert cloud.reportclient.claim_resources(cloud.context, instance_uuid, {
        'allocations': {nodes['src']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512,
                                                     'DISK_GB': 1}}}}, 'p1', 'u1')
    hostdoubles.start_action(cctxt, instance_uuid, 'live-migration')
    instance = objects.Instance.get_by_uuid(cctxt, instance_uuid, expected_attrs=['flavor'])
    instance.power_state = power_state.RUNNING
    instance.availability_zone = 'nova'
    instance.save()
    migration = hostdoubles.new_migration(cctxt, instance, None, status='accepted',
                                          migration_type='live-migration')
    return instance, migration


def _node(cctxt, host):
    (node,) = objects.ComputeNodeList.get_all_by_host(cctxt, host)
    return node


def _event(cctxt, instance_uuid):
    (action,) = objects.InstanceActionList.get_by_instance_uuid(cctxt, instance_uuid)
    (event,) = [e for e in objects.InstanceActionEventList.get_by_action(cctxt, action.id)
                if e.event == live_migrate.LIVE_EVENT]
    return event


def _allocated(cloud, consumer_uuid):
    return sorted(cloud.reportclient.get_allocations_for_consumer(cloud.context,
                                                                  consumer_uuid))


def _assert_refused(cloud, cctxt, nodes, instance, migration, fault):
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('active', None, 'src')
    message = hostdoubles.fault(cctxt, instance.uuid)
    assert message is not None and fault in message
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    assert _allocated(cloud, instance.uuid) == [nodes['src']]
    assert _allocated(cloud, migration.uuid) == []
    assert _event(cctxt, instance.uuid).result == 'Error'


def _migrate(lm_env, instance, migration, host=None, force=False, raise_errors=False):
    _cloud, cctxt, deps, _nodes = lm_env
    live_migrate.live_migrate_instance(deps, cctxt, instance, host, None, migration,
                                       raise_errors, force=force)


# -- refusals before any claim ------------------------------------------------------------

def test_a_source_compute_that_is_down_refuses_before_the_scheduler(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    cloud.stop_heartbeats('src')

    _migrate(lm, instance, migration)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'src is unavailable')
    assert deps.query_client.specs == []
    assert deps.compute_rpcapi.casts == []


def test_a_guest_that_does_not_run_is_refused(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    instance.power_state = power_state.SHUTDOWN
    instance.save()

    _migrate(lm, instance, migration)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'power_state')
    assert deps.query_client.specs == []


@pytest.mark.parametrize('force', [False, True])
def test_a_named_destination_that_does_not_exist_is_refused(lm, force):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)

    _migrate(lm, instance, migration, host='nowhere', force=force)

    _assert_refused(cloud, cctxt, nodes, instance, migration,
                    'Compute host nowhere could not be found')
    assert deps.query_client.specs == []
    assert deps.compute_rpcapi.checked == []


def test_a_named_destination_that_does_not_exist_is_raised_before_2_34(lm):
    cloud, cctxt, _deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)

    with pytest.raises(exception.MigrationPreCheckError, match='nowhere could not be found'):
        _migrate(lm, instance, migration, host='nowhere', raise_errors=True)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'nowhere')


@pytest.mark.parametrize('force', [False, True])
def test_a_named_destination_that_is_down_is_refused(lm, force):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    cloud.stop_heartbeats('dst')

    _migrate(lm, instance, migration, host='dst', force=force)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'dst is unavailable')
    assert deps.compute_rpcapi.checked == []


@pytest.mark.parametrize('force', [False, True])
def test_the_source_itself_is_refused_as_destination(lm, force):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)

    _migrate(lm, instance, migration, host='src', force=force)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'already on host src')
    assert deps.query_client.specs == []


@pytest.mark.parametrize('force', [False, True])
def test_a_destination_of_another_hypervisor_type_is_refused(lm, force):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    node = _node(cctxt, 'dst')
    node.hypervisor_type = 'QEMU'
    node.save()

    _migrate(lm, instance, migration, host='dst', force=force)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'host dst runs QEMU')
    assert deps.compute_rpcapi.checked == []


@pytest.mark.parametrize('force', [False, True])
def test_a_destination_with_an_older_hypervisor_is_refused(lm, force):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    for host, version in (('src', 6002000), ('dst', 6001000)):
        node = _node(cctxt, host)
        node.hypervisor_version = version
        node.save()

    _migrate(lm, instance, migration, host='dst', force=force)

    _assert_refused(cloud, cctxt, nodes, instance, migration,
                    'the hypervisor of host dst (version 6001000) is older')
    assert deps.compute_rpcapi.checked == []


def test_a_destination_with_a_newer_hypervisor_is_taken(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    node = _node(cctxt, 'dst')
    node.hypervisor_version = 2
    node.save()

    _migrate(lm, instance, migration, host='dst', force=True)

    assert [name for name, _args, _kwargs in deps.compute_rpcapi.casts] == ['live_migration']


# -- a forced host: the source's allocation copied there ----------------------------------

def test_a_forced_host_without_room_is_refused_and_keeps_nothing(lm):
    cloud, cctxt, deps, nodes = lm
    nodes['small'] = cloud.add_host('small', memory_mb=768)  # 256 MiB free
    instance, migration = _server(cloud, cctxt, nodes)

    _migrate(lm, instance, migration, host='small', force=True)

    _assert_refused(cloud, cctxt, nodes, instance, migration,
                    'host small has not enough free resources')
    assert deps.query_client.specs == []
    assert deps.compute_rpcapi.checked == []
    usages = cloud.reportclient.get_allocations_for_consumer
    assert all(nodes['small'] not in usages(cloud.context, c)
               for c in (instance.uuid, migration.uuid))


def test_a_forced_host_with_room_holds_the_instance_and_the_migration_the_source(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)

    _migrate(lm, instance, migration, host='dst2', force=True)

    assert deps.query_client.specs == []  # no scheduler for a forced host
    assert _allocated(cloud, instance.uuid) == [nodes['dst2']]
    assert _allocated(cloud, migration.uuid) == [nodes['src']]
    assert cloud.reportclient.get_allocations_for_consumer(
        cloud.context, instance.uuid)[nodes['dst2']]['resources'] == {
        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
    saved_migration = objects.Migration.get_by_id(cctxt, migration.id)
    assert (saved_migration.status, saved_migration.dest_compute,
            saved_migration.dest_node) == ('accepted', 'dst2', 'dst2')
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('active', 'migrating', 'src')
    assert _event(cctxt, instance.uuid).result == 'Success'
    ((name, args, _kwargs),) = deps.compute_rpcapi.casts
    assert (name, args[1], args[3].id) == ('live_migration', 'dst2', migration.id)


# -- the scheduler's choice ----------------------------------------------------------------

def test_no_valid_host_from_the_scheduler_gives_the_source_back(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.query_client.error = exception.NoValidHost(reason='all hosts are full')

    _migrate(lm, instance, migration)

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'all hosts are full')
    (spec,) = deps.query_client.specs
    assert (spec.ignore_hosts, spec.requested_destination) == (['src'], None)
    assert deps.compute_rpcapi.casts == []


def test_a_named_host_the_scheduler_rejects_is_refused(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.query_client.error = exception.NoValidHost(reason='dst failed RamFilter')

    _migrate(lm, instance, migration, host='dst')

    _assert_refused(cloud, cctxt, nodes, instance, migration, 'dst failed RamFilter')
    (spec,) = deps.query_client.specs
    assert spec.requested_destination == 'dst'


def test_a_scheduled_host_that_refuses_its_checks_is_left_out_for_the_next(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.refuse['dst'] = exception.MigrationPreCheckError(
        reason='dst has no shared storage')

    _migrate(lm, instance, migration)

    assert deps.compute_rpcapi.checked == ['dst', 'dst2']
    assert [spec.ignore_hosts for spec in deps.query_client.specs] == [
        ['src'], ['src', 'dst']]
    assert _allocated(cloud, instance.uuid) == [nodes['dst2']]
    assert _allocated(cloud, migration.uuid) == [nodes['src']]
    assert objects.Migration.get_by_id(cctxt, migration.id).dest_compute == 'dst2'
    assert hostdoubles.fault(cctxt, instance.uuid) is None
    assert _event(cctxt, instance.uuid).result == 'Success'
    ((name, args, _kwargs),) = deps.compute_rpcapi.casts
    assert (name, args[1]) == ('live_migration', 'dst2')


def _other_hypervisor(cloud, cctxt, host):
    node = _node(cctxt, host)
    node.hypervisor_type = 'QEMU'
    node.save()


@pytest.mark.parametrize('unfit', [_other_hypervisor,
                                   lambda cloud, cctxt, host: cloud.stop_heartbeats(host)],
                         ids=['other-hypervisor', 'down'])
def test_a_scheduled_host_that_fails_the_conductors_checks_is_left_out(lm, unfit):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    unfit(cloud, cctxt, 'dst')

    _migrate(lm, instance, migration)

    assert deps.query_client.chosen == ['dst', 'dst2']
    assert deps.compute_rpcapi.checked == ['dst2']
    assert _allocated(cloud, instance.uuid) == [nodes['dst2']]
    assert _allocated(cloud, migration.uuid) == [nodes['src']]
    ((name, args, _kwargs),) = deps.compute_rpcapi.casts
    assert (name, args[1]) == ('live_migration', 'dst2')


def test_a_host_that_does_not_answer_its_checks_is_left_out_for_the_next(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.refuse['dst'] = messaging.MessagingTimeout('no reply')

    _migrate(lm, instance, migration)

    assert deps.compute_rpcapi.checked == ['dst', 'dst2']
    assert _allocated(cloud, instance.uuid) == [nodes['dst2']]


def test_hosts_that_all_refuse_end_in_error_after_max_attempts(lm):
    cloud, cctxt, deps, nodes = lm
    CONF.set_override('max_attempts', 2, group='scheduler')
    try:
        instance, migration = _server(cloud, cctxt, nodes)
        for host in ('dst', 'dst2', 'dst3'):
            deps.compute_rpcapi.refuse[host] = exception.MigrationPreCheckError(
                reason='%s cannot take it' % host)

        _migrate(lm, instance, migration)
    finally:
        CONF.clear_override('max_attempts', group='scheduler')

    assert deps.compute_rpcapi.checked == ['dst', 'dst2']
    _assert_refused(cloud, cctxt, nodes, instance, migration, 'after 2 attempts')
    assert 'dst2 cannot take it' in hostdoubles.fault(cctxt, instance.uuid)
    assert deps.compute_rpcapi.casts == []


def test_a_refusal_is_raised_before_2_34(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.refuse['dst'] = exception.MigrationPreCheckError(
        reason='dst has no shared storage')

    with pytest.raises(exception.MigrationPreCheckError, match='no shared storage'):
        _migrate(lm, instance, migration, host='dst', raise_errors=True)

    # A named host is the only one tried.
    assert deps.compute_rpcapi.checked == ['dst']
    _assert_refused(cloud, cctxt, nodes, instance, migration, 'no shared storage')


def test_a_scheduled_host_that_passes_is_handed_to_the_source_with_its_zone(lm):
    cloud, cctxt, deps, nodes = lm
    zone = objects.Aggregate(cloud.context, name='az-dst',
                             metadata={'availability_zone': 'az-dst'})
    zone.create()
    zone.add_host('dst')
    instance, migration = _server(cloud, cctxt, nodes)

    _migrate(lm, instance, migration)

    assert _allocated(cloud, instance.uuid) == [nodes['dst']]
    assert _allocated(cloud, migration.uuid) == [nodes['src']]
    saved_migration = objects.Migration.get_by_id(cctxt, migration.id)
    assert (saved_migration.dest_compute, saved_migration.dest_node) == ('dst', 'dst')
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.task_state, saved.host) == ('migrating', 'src')
    assert _event(cctxt, instance.uuid).result == 'Success'
    ((name, args, _kwargs),) = deps.compute_rpcapi.casts
    cast_instance, dest, block_migration, cast_migration, data = args
    assert (name, cast_instance.uuid, dest, block_migration, cast_migration.id) == (
        'live_migration', instance.uuid, 'dst', True, migration.id)
    assert (data.dest_zone, data.dest_host) == ('az-dst', 'dst')


def test_a_source_that_cannot_be_told_gives_everything_back(lm):
    cloud, cctxt, deps, nodes = lm
    instance, migration = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.error = messaging.MessageDeliveryFailure('src gone')

    _migrate(lm, instance, migration)

    _assert_refused(cloud, cctxt, nodes, instance, migration, '')
