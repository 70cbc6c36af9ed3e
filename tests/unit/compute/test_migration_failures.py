"""Evacuation's failure paths on the compute hosts (``compute/evacuate.py``) and what
the resource tracker counts for a move that failed (``compute/move_claims.py``): a
rebuild that fails leaves the server in ERROR on the new host, which keeps its
allocation, with the migration ``failed`` and no half-made guest; the dead host, when
it comes back, cleans up only after evacuations that finished."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import evacuate, move_claims
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import Manager, ScriptedReportClient

SRC, DST = 'dead-host', 'new-host'


@pytest.fixture
def hosts(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        src = Manager(ScriptedReportClient(cloud.reportclient), cctxt, host=SRC)
        dst = Manager(ScriptedReportClient(cloud.reportclient), cctxt, host=DST)
        yield src, dst, cctxt


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def _evacuating(src, dst, cctxt):
    """What the conductor did before the rebuild: the dead host's allocation handed to
    the migration, the new host claimed for the server, the task rebuilding."""
    instance = hostdoubles.instance_on_host(src, cctxt)
    src.driver.spawn(cctxt, instance, None, [], None, {})
    migration = hostdoubles.new_migration(cctxt, instance, DST, status='pre-migrating',
                                          migration_type='evacuation')
    assert src.reportclient.move_allocations(cctxt, instance.uuid, migration.uuid)
    assert dst.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        dst.rt.compute_nodes[DST].uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 512,
                                                       'DISK_GB': 1}}}}, 'p1', 'u1')
    instance.task_state = 'rebuilding'
    instance.save()
    hostdoubles.start_action(cctxt, instance.uuid, 'evacuate')
    return instance, migration


def _assert_error_here(src, dst, cctxt, instance, migration, fault):
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('error', None, DST)
    assert fault in hostdoubles.fault(cctxt, instance.uuid)
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'failed'
    assert instance.uuid not in dst.driver.list_instance_uuids()
    # The new host keeps the server's allocation; the dead host's stays the
    # migration's (an operator's, once that host is back).
    assert list(hostdoubles.allocations(dst, cctxt, instance.uuid)) == [
        dst.rt.compute_nodes[DST].uuid]
    assert list(hostdoubles.allocations(dst, cctxt, migration.uuid)) == [
        src.rt.compute_nodes[SRC].uuid]


def test_a_failed_rebuild_leaves_the_server_in_error_on_the_new_host(hosts):
    src, dst, cctxt = hosts
    instance, migration = _evacuating(src, dst, cctxt)
    real_spawn = dst.driver.spawn

    def spawn(*args, **kwargs):
        real_spawn(*args, **kwargs)  # the guest is half made
        raise RuntimeError('guest will not boot')
    dst.driver.spawn = spawn

    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)

    _assert_error_here(src, dst, cctxt, instance, migration, 'RuntimeError')


def test_an_evacuation_the_new_host_cannot_claim_ends_in_error_on_it(hosts):
    src, dst, cctxt = hosts
    instance, migration = _evacuating(src, dst, cctxt)
    instance.flavor.memory_mb = 10 ** 7

    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)

    _assert_error_here(src, dst, cctxt, instance, migration,
                       'Insufficient compute resources')
    assert migration.uuid not in dst.rt.tracked


def test_a_half_made_guest_that_cannot_be_removed_still_fails_the_migration(hosts):
    src, dst, cctxt = hosts
    instance, migration = _evacuating(src, dst, cctxt)
    dst.driver.spawn = _raise(RuntimeError('guest will not boot'))
    dst.driver.destroy = _raise(RuntimeError('hypervisor gone'))

    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('error', None, DST)
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'failed'


def test_a_migration_that_cannot_be_marked_failed_still_leaves_the_server_in_error(
        hosts, monkeypatch):
    src, dst, cctxt = hosts
    instance, migration = _evacuating(src, dst, cctxt)
    dst.driver.spawn = _raise(RuntimeError('guest will not boot'))
    monkeypatch.setattr(migration, 'save', _raise(messaging.MessagingTimeout('gone')))

    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('error', None, DST)
    assert hostdoubles.fault(cctxt, instance.uuid) == 'RuntimeError'
    assert instance.uuid not in dst.driver.list_instance_uuids()


# -- the dead host comes back ---------------------------------------------------------------

def _evacuated(src, dst, cctxt):
    instance, migration = _evacuating(src, dst, cctxt)
    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'done'
    return instance, migration


def test_the_dead_host_leaves_a_failed_evacuation_to_the_operator(hosts):
    src, dst, cctxt = hosts
    instance, migration = _evacuating(src, dst, cctxt)
    dst.driver.spawn = _raise(RuntimeError('guest will not boot'))
    evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)

    assert evacuate.destroy_evacuated_instances(src, cctxt) == []
    assert instance.uuid in src.driver.list_instance_uuids()
    assert hostdoubles.allocations(src, cctxt, migration.uuid)


def test_the_dead_host_frees_an_evacuated_server_whose_guest_is_already_gone(hosts):
    src, dst, cctxt = hosts
    instance, migration = _evacuated(src, dst, cctxt)
    src.driver.destroy = _raise(exception.InstanceNotFound(instance_id=instance.uuid))

    assert evacuate.destroy_evacuated_instances(src, cctxt) == [instance.uuid]

    assert hostdoubles.allocations(src, cctxt, migration.uuid) == {}
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'completed'


def test_the_dead_host_keeps_the_allocation_of_a_guest_it_cannot_destroy(hosts):
    src, dst, cctxt = hosts
    # Both made before either is rebuilt: the dead host's resource audit (run when an
    # instance is put on it here) would free a finished evacuation's allocation itself.
    stuck, stuck_migration = _evacuating(src, dst, cctxt)
    other, other_migration = _evacuating(src, dst, cctxt)
    for instance, migration in ((stuck, stuck_migration), (other, other_migration)):
        evacuate.rebuild_evacuated(dst, cctxt, instance, DST, migration, None, None)
    real_destroy = src.driver.destroy

    def destroy(context, instance, **kwargs):
        if instance.uuid == stuck.uuid:
            raise RuntimeError('hypervisor busy')
        real_destroy(context, instance, **kwargs)
    src.driver.destroy = destroy

    assert evacuate.destroy_evacuated_instances(src, cctxt) == [other.uuid]

    assert hostdoubles.allocations(src, cctxt, stuck_migration.uuid)
    assert objects.Migration.get_by_id(cctxt, stuck_migration.id).status == 'done'
    assert hostdoubles.allocations(src, cctxt, other_migration.uuid) == {}
    # The next start tries the stuck one again.
    src.driver.destroy = real_destroy
    assert evacuate.destroy_evacuated_instances(src, cctxt) == [stuck.uuid]


# -- what a failed move still holds in the resource tracker ---------------------------------

def test_a_move_that_failed_holds_nothing_on_either_host(hosts):
    src, dst, cctxt = hosts
    instance = hostdoubles.instance_on_host(src, cctxt)
    migration = hostdoubles.new_migration(cctxt, instance, DST, status='migrating')
    assert set(move_claims.migration_usage(cctxt, DST, DST, [])) == {migration.uuid}
    migration.status = 'error'
    migration.save()

    assert move_claims.migration_usage(cctxt, DST, DST, []) == {}
    assert move_claims.migration_usage(cctxt, SRC, SRC, [instance]) == {}
