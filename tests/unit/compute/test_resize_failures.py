"""Each failing step of a resize (``compute/resize.py``) undoes the move as the module
promises: the migration in ``error``, the source's allocation back on the instance
(the destination's dropped), the destination's claim dropped, the instance back on the
source with its old flavor and state and a fault; a failure once the disks have moved
puts the old guest back. A failed finish leaves the instance in ERROR on the
destination and frees the source."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import power_state, resize
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import Manager, RecordingComputeRPC, ScriptedReportClient

SRC, DST = 'src-host', 'dst-host'
NEW_FLAVOR = dict(id=2, flavorid='f2', name='f2', memory_mb=1024, vcpus=2, root_gb=1,
                  ephemeral_gb=0, swap=0, extra_specs={})


@pytest.fixture
def hosts(cloud, monkeypatch):
    rpc = RecordingComputeRPC()
    monkeypatch.setattr(resize, '_rpcapi', lambda: rpc)
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        src = Manager(ScriptedReportClient(cloud.reportclient), cctxt, host=SRC)
        dst = Manager(ScriptedReportClient(cloud.reportclient), cctxt, host=DST)
        yield src, dst, rpc, cctxt


def _moving(src, dst, cctxt, flavor=None):
    """What the conductor did before prep_resize: a migration, the source's allocation
    handed to it, the destination claimed for the instance, the task resize_prep."""
    instance = hostdoubles.instance_on_host(src, cctxt)
    src.driver.spawn(cctxt, instance, None, [], None, {})
    flavor = flavor or objects.Flavor(**NEW_FLAVOR)
    migration = hostdoubles.new_migration(cctxt, instance, None, new_flavor_id=flavor.id)
    assert src.reportclient.move_allocations(cctxt, instance.uuid, migration.uuid)
    assert dst.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        dst.rt.compute_nodes[DST].uuid: {'resources': {'VCPU': 2, 'MEMORY_MB': 1024,
                                                       'DISK_GB': 1}}}}, 'p1', 'u1')
    instance.task_state = 'resize_prep'
    instance.save()
    hostdoubles.start_action(cctxt, instance.uuid, 'resize')
    return instance, migration, flavor


def _prepared(src, dst, rpc, cctxt):
    """The destination has claimed: the source's resize_instance is next."""
    instance, migration, flavor = _moving(src, dst, cctxt)
    resize.prep_resize(dst, cctxt, instance, flavor, migration, DST, True)
    assert [c[0] for c in rpc.casts] == ['resize_instance']
    rpc.casts.clear()
    return (objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['flavor', 'old_flavor',
                                                         'new_flavor', 'system_metadata']),
            objects.Migration.get_by_id(cctxt, migration.id), flavor)


def _migrated(src, dst, rpc, cctxt):
    """The source has stopped the guest and handed over: finish_resize is next."""
    instance, migration, flavor = _prepared(src, dst, rpc, cctxt)
    resize.resize_instance(src, cctxt, instance, migration, flavor, True)
    ((name, args, _kwargs),) = rpc.casts
    assert name == 'finish_resize'
    rpc.casts.clear()
    return (objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['flavor', 'old_flavor',
                                                         'new_flavor', 'system_metadata']),
            objects.Migration.get_by_id(cctxt, migration.id), args[2])


def _providers(mgr, cctxt, consumer):
    node_uuids = {}
    for name, node in mgr.rt.compute_nodes.items():
        node_uuids[node.uuid] = name
    return sorted(node_uuids.get(rp, rp) for rp in hostdoubles.allocations(mgr, cctxt,
                                                                          consumer))


def _assert_move_undone(src, dst, cctxt, instance, migration, fault):
    """The state every failure before finish_resize promises."""
    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid, expected_attrs=[
        'flavor', 'old_flavor', 'new_flavor', 'system_metadata'])
    assert (saved.vm_state, saved.task_state, saved.host, saved.node) == (
        'active', None, SRC, SRC)
    assert saved.flavor.id == 1 and saved.old_flavor is None and saved.new_flavor is None
    assert resize.OLD_VM_STATE not in saved.system_metadata
    assert fault in hostdoubles.fault(cctxt, instance.uuid)
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    # The source's allocation is the instance's again; the destination's is gone.
    src_node = src.rt.compute_nodes[SRC].uuid
    assert list(hostdoubles.allocations(src, cctxt, instance.uuid)) == [src_node]
    assert hostdoubles.allocations(src, cctxt, migration.uuid) == {}


# -- prep_resize (destination) -----------------------------------------------------------

def test_a_claim_the_destination_cannot_take_undoes_the_move(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, _flavor = _moving(src, dst, cctxt)
    huge = objects.Flavor(**dict(NEW_FLAVOR, memory_mb=10 ** 7))

    resize.prep_resize(dst, cctxt, instance, huge, migration, DST, True)

    _assert_move_undone(src, dst, cctxt, instance, migration,
                        'Insufficient compute resources')
    assert migration.uuid not in dst.rt.tracked
    assert rpc.casts == []
    assert dst.reportclient.called('move_allocations') == [
        (migration.uuid, instance.uuid)]


def test_the_source_unreachable_after_the_claim_drops_the_claim(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _moving(src, dst, cctxt)
    rpc.error = messaging.MessagingTimeout('source gone')

    resize.prep_resize(dst, cctxt, instance, flavor, migration, DST, True)

    _assert_move_undone(src, dst, cctxt, instance, migration, 'MessagingTimeout')
    assert migration.uuid not in dst.rt.tracked


def test_a_migration_that_cannot_be_marked_failed_still_gets_the_allocation_back(
        hosts, monkeypatch):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _moving(src, dst, cctxt)

    def save():
        raise messaging.MessagingTimeout('conductor gone')
    monkeypatch.setattr(migration, 'save', save)

    resize.prep_resize(dst, cctxt, instance, flavor, migration, DST, True)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('active', None, SRC)
    assert list(hostdoubles.allocations(src, cctxt, instance.uuid)) == [
        src.rt.compute_nodes[SRC].uuid]
    assert migration.uuid not in dst.rt.tracked


def test_an_allocation_placement_will_not_move_back_still_restores_the_instance(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _moving(src, dst, cctxt)
    rpc.error = messaging.MessagingTimeout('source gone')
    dst.reportclient.fail['move_allocations'] = [
        exception.PlacementAPIConnectFailure(reason='refused')]

    resize.prep_resize(dst, cctxt, instance, flavor, migration, DST, True)

    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid, expected_attrs=[
        'flavor', 'old_flavor', 'new_flavor', 'system_metadata'])
    assert (saved.vm_state, saved.task_state, saved.host, saved.flavor.id) == (
        'active', None, SRC, 1)
    assert saved.old_flavor is None and saved.new_flavor is None
    assert resize.OLD_VM_STATE not in saved.system_metadata
    # The fault is the move's failure, not the failure to undo it.
    assert hostdoubles.fault(cctxt, instance.uuid) == 'MessagingTimeout'
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    assert migration.uuid not in dst.rt.tracked


# -- resize_instance (source) ------------------------------------------------------------

def test_a_failure_to_stop_and_move_the_disks_undoes_the_move(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _prepared(src, dst, rpc, cctxt)

    def migrate_disk_and_power_off(*args, **kwargs):
        raise exception.MigrationError(reason='disk copy failed')
    src.driver.migrate_disk_and_power_off = migrate_disk_and_power_off

    resize.resize_instance(src, cctxt, instance, migration, flavor, True)

    _assert_move_undone(src, dst, cctxt, instance, migration, 'disk copy failed')
    assert rpc.casts == []
    assert src.driver.get_info(instance).state == power_state.RUNNING
    # The destination's claim ends with its next resource audit (the migration is over).
    dst.rt.update_available_resource(cctxt, DST)
    assert migration.uuid not in dst.rt.tracked


def test_the_destination_unreachable_after_the_disks_moved_restarts_the_old_guest(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _prepared(src, dst, rpc, cctxt)
    rpc.error = messaging.MessagingTimeout('destination gone')

    resize.resize_instance(src, cctxt, instance, migration, flavor, True)

    _assert_move_undone(src, dst, cctxt, instance, migration, 'MessagingTimeout')
    assert src.driver.get_info(instance).state == power_state.RUNNING


def test_an_old_guest_that_cannot_be_restarted_still_leaves_the_move_undone(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, flavor = _prepared(src, dst, rpc, cctxt)
    rpc.error = messaging.MessagingTimeout('destination gone')
    restores = []

    def finish_revert_migration(*args, **kwargs):
        restores.append(kwargs)
        raise RuntimeError('hypervisor gone')
    src.driver.finish_revert_migration = finish_revert_migration

    resize.resize_instance(src, cctxt, instance, migration, flavor, True)

    assert restores == [{'block_device_info': None, 'power_on': True}]
    _assert_move_undone(src, dst, cctxt, instance, migration, 'MessagingTimeout')


# -- finish_resize (destination) ---------------------------------------------------------

def test_a_failed_finish_leaves_the_instance_in_error_here_and_frees_the_source(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, disk_info = _migrated(src, dst, rpc, cctxt)

    def finish_migration(*args, **kwargs):
        raise RuntimeError('guest will not start')
    dst.driver.finish_migration = finish_migration

    resize.finish_resize(dst, cctxt, instance, migration, disk_info)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('error', None, DST)
    assert hostdoubles.fault(cctxt, instance.uuid) == 'RuntimeError'
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    assert hostdoubles.allocations(dst, cctxt, migration.uuid) == {}
    assert list(hostdoubles.allocations(dst, cctxt, instance.uuid)) == [
        dst.rt.compute_nodes[DST].uuid]


def test_a_failed_finish_whose_source_allocation_placement_keeps_still_ends_in_error(
        hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration, disk_info = _migrated(src, dst, rpc, cctxt)
    dst.driver.finish_migration = _raise(RuntimeError('guest will not start'))
    dst.reportclient.fail['delete_allocation_for_instance'] = [
        exception.PlacementAPIConnectFailure(reason='refused')]

    resize.finish_resize(dst, cctxt, instance, migration, disk_info)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state) == ('error', None)
    # The fault is the finish's failure, not Placement's.
    assert hostdoubles.fault(cctxt, instance.uuid) == 'RuntimeError'
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'


def test_a_failed_finish_frees_the_source_even_if_the_migration_cannot_be_saved(
        hosts, monkeypatch):
    src, dst, rpc, cctxt = hosts
    instance, migration, disk_info = _migrated(src, dst, rpc, cctxt)
    dst.driver.finish_migration = _raise(RuntimeError('guest will not start'))
    real_save = migration.save

    def save():
        if migration.status == 'error':
            raise messaging.MessagingTimeout('conductor gone')
        real_save()
    monkeypatch.setattr(migration, 'save', save)

    resize.finish_resize(dst, cctxt, instance, migration, disk_info)

    assert hostdoubles.stored(cctxt, instance.uuid).vm_state == 'error'
    assert hostdoubles.allocations(dst, cctxt, migration.uuid) == {}


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


# -- confirm -------------------------------------------------------------------------------

def _resized(src, dst, rpc, cctxt):
    instance, migration, disk_info = _migrated(src, dst, rpc, cctxt)
    resize.finish_resize(dst, cctxt, instance, migration, disk_info)
    return (objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['flavor', 'old_flavor',
                                                         'new_flavor', 'system_metadata']),
            objects.Migration.get_by_id(cctxt, migration.id))


def test_a_confirm_that_meets_a_delete_frees_the_source_and_leaves_the_rest_to_it(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration = _resized(src, dst, rpc, cctxt)
    assert instance.vm_state == 'resized'
    deleting = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    deleting.task_state = 'deleting'
    deleting.save()

    resize.confirm_resize(src, cctxt, instance, migration)

    assert hostdoubles.fault(cctxt, instance.uuid) is None
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'deleting'
    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'confirmed'
    assert hostdoubles.allocations(src, cctxt, migration.uuid) == {}
    assert migration.uuid not in src.rt.tracked


def test_an_unconfirmed_resize_of_a_vanished_instance_ends_its_migration(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration = _resized(src, dst, rpc, cctxt)
    assert migration.status == 'finished'
    objects.Instance.get_by_uuid(cctxt, instance.uuid).destroy()

    assert resize.confirm_unconfirmed_resizes(dst, cctxt, 0) == 0

    assert objects.Migration.get_by_id(cctxt, migration.id).status == 'error'
    assert rpc.casts == []


def test_a_confirm_that_meets_another_task_records_a_fault_and_leaves_that_task(hosts):
    src, dst, rpc, cctxt = hosts
    instance, migration = _resized(src, dst, rpc, cctxt)
    other = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    other.task_state = 'rebooting'
    other.save()

    resize.confirm_resize(src, cctxt, instance, migration)

    assert 'Conflict updating instance' in hostdoubles.fault(cctxt, instance.uuid)
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state) == ('resized', 'rebooting')
    # The source was already freed: what confirm did before the save stays done.
    assert hostdoubles.allocations(src, cctxt, migration.uuid) == {}
