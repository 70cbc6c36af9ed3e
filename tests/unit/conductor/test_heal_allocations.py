"""Allocation healing (``conductor/tasks/heal_allocations.py``) against a real Placement
and SQLite databases: who owns a consumer, what is found, what is repaired, and that a
consumer written between the finding and the repair is left alone."""
from __future__ import annotations

import logging
import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conductor.tasks import heal_allocations as heal

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


@pytest.fixture
def env(cloud):
    node = cloud.add_host('h1')
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield cloud, cctxt, node


def _claim(cloud, consumer, node, resources=None, consumer_type='INSTANCE'):
    assert cloud.reportclient.claim_resources(
        cloud.context, consumer, {'allocations': {node: {'resources': resources or RESOURCES}}},
        'p1', 'u1', consumer_type=consumer_type)


def _server(cloud, node, claim=True, **kwargs):
    instance_uuid = cloud.add_instance('h1', **kwargs)
    objects.InstanceMapping(cloud.context, instance_uuid=instance_uuid,
                            cell_mapping=cloud.cell, project_id='p1', user_id='u1').create()
    if claim:
        _claim(cloud, instance_uuid, node)
    return instance_uuid


def _migration(cctxt, instance_uuid, status):
    migration = objects.Migration(cctxt, uuid=str(uuid.uuid4()), instance_uuid=instance_uuid,
                                  status=status, migration_type='migration',
                                  source_compute='h1', source_node='h1',
                                  dest_compute='h1', dest_node='h1')
    migration.create()
    return migration


def _held(cloud, consumer):
    return cloud.reportclient.get_allocations_for_consumer(cloud.context, consumer)


# -- who owns a consumer ------------------------------------------------------------------

def test_live_servers_builds_and_moves_in_progress_are_owned(env):
    cloud, cctxt, node = env
    server = _server(cloud, node)
    building = str(uuid.uuid4())
    objects.InstanceMapping(cloud.context, instance_uuid=building, cell_mapping=None,
                            project_id='p1').create()
    moving = _migration(cctxt, server, 'migrating')
    consumers = heal.Consumers(cloud.context)

    assert consumers.classify(server)[0] is None
    assert consumers.classify(building) == (None, 'server being scheduled')
    assert consumers.classify(moving.uuid) == (None, 'migration in progress')


def test_unknown_and_deleted_servers_are_orphans(env):
    cloud, cctxt, node = env
    deleted = _server(cloud, node)
    objects.Instance.get_by_uuid(cctxt, deleted).destroy()
    buried = str(uuid.uuid4())
    cell0 = objects.CellMapping.get_by_uuid(cloud.context, nl_context.CELL0_UUID)
    objects.InstanceMapping(cloud.context, instance_uuid=buried, cell_mapping=cell0,
                            project_id='p1').create()
    consumers = heal.Consumers(cloud.context)

    assert consumers.classify(str(uuid.uuid4()))[0] == heal.ORPHAN
    assert consumers.classify(deleted) == (heal.ORPHAN, 'its server was deleted')
    # cell0's database is not even read: its servers never hold anything.
    assert consumers.classify(buried)[0] == heal.ORPHAN


def test_a_finished_migration_is_a_leftover_after_the_grace(env, monkeypatch):
    cloud, cctxt, node = env
    server = _server(cloud, node)
    done = _migration(cctxt, server, 'confirmed')
    consumers = heal.Consumers(cloud.context)

    assert consumers.classify(done.uuid)[0] is None  # just finished: its flow frees it
    monkeypatch.setattr(heal, 'LEFTOVER_GRACE', 0)
    kind, why = consumers.classify(done.uuid)
    assert kind == heal.LEFTOVER
    assert 'confirmed' in why and server in why


# -- servers without their allocation -------------------------------------------------------

@pytest.mark.parametrize('kwargs, reason', [
    ({'task_state': 'resize_prep'}, 'task state transition'),
    ({'vm_state': 'building'}, 'building'),
    ({'vm_state': 'shelved_offloaded'}, 'shelved_offloaded'),
])
def test_unsettled_servers_are_not_healed(env, kwargs, reason):
    cloud, cctxt, node = env
    instance = objects.Instance.get_by_uuid(cctxt, _server(cloud, node, claim=False,
                                                           **kwargs))
    assert reason in heal.why_not_healable(cctxt, instance)


def test_a_server_with_a_move_in_progress_is_not_healed(env):
    cloud, cctxt, node = env
    instance = objects.Instance.get_by_uuid(cctxt, _server(cloud, node, claim=False))
    _migration(cctxt, instance.uuid, 'pre-migrating')
    assert 'migration in progress' in heal.why_not_healable(cctxt, instance)


def test_the_missing_allocation_comes_from_the_flavor(env):
    cloud, cctxt, node = env
    instance = objects.Instance.get_by_uuid(cctxt, _server(cloud, node, claim=False))
    assert heal.why_not_healable(cctxt, instance) is None

    finding = heal.check_instance(cctxt, cloud.reportclient, instance)

    assert finding.kind == heal.MISSING
    assert finding.allocations == {node: {'resources': RESOURCES}}
    assert heal.heal_missing(cctxt, cloud.reportclient, finding)
    assert _held(cloud, instance.uuid) == {node: {'resources': RESOURCES}}
    assert heal.check_instance(cctxt, cloud.reportclient, instance) is None
    assert heal.check_instance(cctxt, cloud.reportclient, instance, force=True) is not None


def test_a_server_claimed_meanwhile_is_not_overwritten(env):
    cloud, cctxt, node = env
    instance = objects.Instance.get_by_uuid(cctxt, _server(cloud, node, claim=False))
    finding = heal.check_instance(cctxt, cloud.reportclient, instance)
    _claim(cloud, instance.uuid, node, {'VCPU': 2, 'MEMORY_MB': 256})

    assert not heal.heal_missing(cctxt, cloud.reportclient, finding)
    assert _held(cloud, instance.uuid)[node]['resources'] == {'VCPU': 2, 'MEMORY_MB': 256}


# -- orphans and the periodic run ------------------------------------------------------------

def test_an_orphan_written_meanwhile_is_left_alone(env):
    cloud, cctxt, node = env
    orphan = str(uuid.uuid4())
    _claim(cloud, orphan, node)
    (finding,) = heal.find_unowned(cloud.context, cloud.reportclient, [node],
                                   heal.Consumers(cloud.context))
    record = cloud.reportclient.get_consumer(cloud.context, orphan)
    assert cloud.reportclient.put_allocations(
        cloud.context, orphan, {node: {'resources': {'VCPU': 1}}}, 'p1', 'u1',
        record['consumer_generation'])

    assert not heal.remove(cloud.context, cloud.reportclient, finding)
    assert _held(cloud, orphan)


def test_heal_all_repairs_each_kind_and_logs_it(env, monkeypatch, caplog):
    cloud, cctxt, node = env
    monkeypatch.setattr(heal, 'LEFTOVER_GRACE', 0)
    live = _server(cloud, node)
    missing = _server(cloud, node, claim=False)
    busy = _server(cloud, node, claim=False, task_state='rebooting')
    orphan = str(uuid.uuid4())
    _claim(cloud, orphan, node)
    leftover = _migration(cctxt, live, 'reverted')
    _claim(cloud, leftover.uuid, node, consumer_type='MIGRATION')
    caplog.set_level(logging.INFO, logger=heal.LOG.logger.name)

    report = heal.heal_all(cloud.context, cloud.reportclient, repair=False)
    assert {(f.kind, f.consumer) for f in report} == {
        (heal.ORPHAN, orphan), (heal.LEFTOVER, leftover.uuid), (heal.MISSING, missing)}
    assert _held(cloud, orphan) and not _held(cloud, missing)
    assert sum('report only' in r.getMessage() for r in caplog.records) == 3

    caplog.clear()
    heal.heal_all(cloud.context, cloud.reportclient)
    assert _held(cloud, orphan) == {} and _held(cloud, leftover.uuid) == {}
    assert _held(cloud, missing) == {node: {'resources': RESOURCES}}
    assert _held(cloud, live) == {node: {'resources': RESOURCES}}
    assert _held(cloud, busy) == {}
    warnings = [r.getMessage() for r in caplog.records
                if r.levelno == logging.WARNING and r.name == heal.LOG.logger.name]
    assert len(warnings) == 3
    assert any('orphan' in w and orphan in w for w in warnings)
    assert any('leftover' in w and leftover.uuid in w for w in warnings)
    assert any('missing' in w and missing in w for w in warnings)
    assert heal.heal_all(cloud.context, cloud.reportclient) == []
