"""A move the conductor cannot hand to a destination (``conductor/tasks/migrate.py``) is
undone as the module promises: the source's allocation goes back from the migration to
the instance (replacing the destination's), the migration ends in ``error``, the
instance keeps its state and zone with no task and a fault, and the conductor's event
is marked Error. Only a resize or migration that found no host raises (the API's 400)."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import power_state
from novalite.conductor.tasks import build, live_migrate, migrate
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import RecordingComputeRPC, ScriptedReportClient

NEW_FLAVOR = dict(id=2, flavorid='f2', name='f2', memory_mb=1024, vcpus=2, root_gb=1,
                  ephemeral_gb=0, swap=0, extra_specs={})


class ClaimingSchedulerDouble:
    """The scheduler's query client: claims ``host`` for the instance with the
    spec's flavor, as the scheduler does, and selects it; or raises ``error``."""

    def __init__(self, reportclient, nodes, cell_uuid, host='dst', error=None):
        self._report = reportclient
        self._nodes = nodes
        self._cell_uuid = cell_uuid
        self.host = host
        self.error = error
        self.specs: list = []

    def select_destinations(self, context, spec, instance_uuids, return_objects=False,
                            return_alternates=False):
        self.specs.append(spec)
        if self.error is not None:
            raise self.error
        flavor = spec.flavor
        assert self._report.claim_resources(context, instance_uuids[0], {'allocations': {
            self._nodes[self.host]: {'resources': {
                'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb,
                'DISK_GB': flavor.root_gb}}}}, 'p1', 'u1')
        return [[objects.Selection(
            compute_node_uuid=self._nodes[self.host], service_host=self.host,
            nodename=self.host, cell_uuid=self._cell_uuid, allocation_request=None,
            allocation_request_version=None, availability_zone='zone-' + self.host)]]


@pytest.fixture
def env(cloud):
    nodes = {'src': cloud.add_host('src'), 'dst': cloud.add_host('dst')}
    report = ScriptedReportClient(cloud.reportclient)
    deps = build.Dependencies(
        _report=report, _compute=RecordingComputeRPC(),
        _query=ClaimingSchedulerDouble(cloud.reportclient, nodes, cloud.cell.uuid))
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield cloud, cctxt, deps, nodes


def _server(cloud, cctxt, nodes, task_state='resize_prep'):
    """A server on ``src``, allocated there, with the task the API set for the move."""
    instance_uuid = cloud.add_instance('src', task_state=task_state)
    objects.InstanceMapping(cloud.context, instance_uuid=instance_uuid,
                            cell_mapping=cloud.cell, project_id='p1').create()
    assert cloud.reportclient.claim_resources(cloud.context, instance_uuid, {
        'allocations': {nodes['src']: {'resources': {'VCPU': 1, 'MEMORY_MB': 512,
                                                     'DISK_GB': 1}}}}, 'p1', 'u1')
    hostdoubles.start_action(cctxt, instance_uuid, 'migrate')
    instance = objects.Instance.get_by_uuid(cctxt, instance_uuid, expected_attrs=['flavor'])
    instance.availability_zone = 'zone-src'
    instance.save()
    return instance


def _migration(cctxt, instance_uuid):
    (migration,) = objects.MigrationList.get_by_filters(cctxt, {'instance_uuid':
                                                                instance_uuid})
    return migration


def _assert_move_undone(cloud, cctxt, nodes, instance, migration, fault, event):
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('active', None, 'src')
    assert saved.availability_zone == 'zone-src'
    assert fault in hostdoubles.fault(cctxt, instance.uuid)
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    allocations = cloud.reportclient.get_allocations_for_consumer
    assert list(allocations(cloud.context, instance.uuid)) == [nodes['src']]
    assert allocations(cloud.context, migration.uuid) == {}
    (action,) = objects.InstanceActionList.get_by_instance_uuid(cctxt, instance.uuid)
    (finished,) = [e for e in objects.InstanceActionEventList.get_by_action(cctxt, action.id)
                   if e.event == event]
    assert finished.result == 'Error'


# -- resize and cold migration -------------------------------------------------------------

def test_no_valid_host_undoes_the_move_and_is_raised(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes)
    deps._query.error = exception.NoValidHost(reason='all full')

    with pytest.raises(exception.NoValidHost):
        migrate.migrate_server(deps, cctxt, instance, objects.Flavor(**NEW_FLAVOR),
                               True, None)

    migration = _migration(cctxt, instance.uuid)
    _assert_move_undone(cloud, cctxt, nodes, instance, migration, 'all full',
                        migrate.MIGRATE_EVENT)
    assert deps.reportclient.called('move_allocations')[-1] == (
        migration.uuid, instance.uuid)
    assert deps.compute_rpcapi.casts == []


def test_a_scheduler_that_does_not_answer_is_no_valid_host(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes)
    deps._query.error = messaging.MessagingTimeout('no reply')

    with pytest.raises(exception.NoValidHost, match='did not answer'):
        migrate.migrate_server(deps, cctxt, instance, instance.flavor, True, None)

    _assert_move_undone(cloud, cctxt, nodes, instance, _migration(cctxt, instance.uuid),
                        'did not answer', migrate.MIGRATE_EVENT)


def test_a_destination_that_cannot_be_reached_gets_its_claim_replaced_by_the_source(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.error = messaging.MessageDeliveryFailure('dst gone')

    migrate.migrate_server(deps, cctxt, instance, objects.Flavor(**NEW_FLAVOR), True, None)

    migration = _migration(cctxt, instance.uuid)
    assert migration.dest_compute == 'dst'  # it had been scheduled and claimed
    _assert_move_undone(cloud, cctxt, nodes, instance, migration, 'MessageDeliveryFailure',
                        migrate.MIGRATE_EVENT)


def test_an_allocation_placement_will_not_move_back_still_ends_the_move(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes)
    deps.compute_rpcapi.error = messaging.MessageDeliveryFailure('dst gone')
    deps.reportclient.fail['move_allocations'] = [
        None, exception.PlacementAPIConnectFailure(reason='refused')]

    migrate.migrate_server(deps, cctxt, instance, objects.Flavor(**NEW_FLAVOR), True, None)

    migration = _migration(cctxt, instance.uuid)
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.availability_zone) == (
        'active', None, 'zone-src')
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    assert hostdoubles.fault(cctxt, instance.uuid) == 'MessageDeliveryFailure'


def test_a_server_without_a_request_spec_is_moved_with_one_made_for_it(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes)

    migrate.migrate_server(deps, cctxt, instance, objects.Flavor(**NEW_FLAVOR), True, None)

    (spec,) = deps.query_client.specs
    assert (spec.instance_uuid, spec.flavor.id, spec.ignore_hosts) == (
        instance.uuid, 2, ['src'])
    ((name, _args, kwargs),) = deps.compute_rpcapi.casts
    assert (name, kwargs['host']) == ('prep_resize', 'dst')


# -- evacuation (the API made the migration) ------------------------------------------------

def _api_migration(cctxt, instance, migration_type):
    return hostdoubles.new_migration(cctxt, instance, None, status='accepted',
                                     migration_type=migration_type)


def test_an_evacuation_that_finds_no_host_leaves_the_server_as_it_was(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes, task_state='rebuilding')
    migration = _api_migration(cctxt, instance, 'evacuation')
    deps._query.error = exception.NoValidHost(reason='all full')

    migrate.evacuate_instance(deps, cctxt, instance, None, migration, None, None)

    _assert_move_undone(cloud, cctxt, nodes, instance, migration, 'all full',
                        migrate.EVACUATE_EVENT)


def test_an_evacuation_to_an_unreachable_host_gives_the_claim_back(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes, task_state='rebuilding')
    migration = _api_migration(cctxt, instance, 'evacuation')
    deps.compute_rpcapi.error = messaging.MessageDeliveryFailure('dst gone')

    migrate.evacuate_instance(deps, cctxt, instance, None, migration, None, None)

    assert objects.Migration.get_by_id(cctxt, migration.id).dest_compute == 'dst'
    _assert_move_undone(cloud, cctxt, nodes, instance, migration, 'MessageDeliveryFailure',
                        migrate.EVACUATE_EVENT)


def test_a_live_migration_that_finds_no_host_gives_the_source_back(env):
    cloud, cctxt, deps, nodes = env
    instance = _server(cloud, cctxt, nodes, task_state='migrating')
    instance.power_state = power_state.RUNNING
    instance.save()
    migration = _api_migration(cctxt, instance, 'live-migration')
    deps._query.error = exception.NoValidHost(reason='all full')

    live_migrate.live_migrate_instance(deps, cctxt, instance, None, False, migration, False)

    _assert_move_undone(cloud, cctxt, nodes, instance, migration, 'all full',
                        live_migrate.LIVE_EVENT)
    assert deps.compute_rpcapi.casts == []
