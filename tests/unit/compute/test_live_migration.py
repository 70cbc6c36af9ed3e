"""Live migration between two compute hosts (``compute/live_migration.py`` on the source,
``compute/live_migration_dest.py`` on the destination, through the managers'
endpoints) with the fake driver, a real Placement and a Neutron with multiple port
bindings: the server ends on the destination with its allocation there only and its
ports bound there, or (refused by the destination, failed in the driver, aborted,
interrupted) ACTIVE on the source with its allocation there only, the destination's
bindings and guest gone, the migration 'error' with a fault or 'cancelled' without."""
from __future__ import annotations

import dataclasses
import threading
import time
import types
import uuid
from collections.abc import Callable, Iterator

import pytest

from novalite import context as nl_context
from novalite import exception, executor, objects
from novalite.compute import live_migration, live_migration_dest, manager, power_state
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from novalite.virt import fake
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import ScriptedReportClient
from tests.unit.compute.livedoubles import BindingNeutron, HostsRPC

SRC, DST = 'src', 'dst'
MiB = 1024 ** 2
# A guest of the test flavor (512 MiB) moves in half a millisecond, or never.
FAST, STALLED = 1e6, 0.001


@dataclasses.dataclass
class Hosts:
    cloud: object
    cctxt: nl_context.RequestContext
    src: manager.ComputeManager
    dst: manager.ComputeManager
    rpc: HostsRPC
    neutron: BindingNeutron


@dataclasses.dataclass
class Moving:
    instance: objects.Instance
    migration: objects.Migration
    data: objects.LiveMigrateData
    port: str


def _conf(**overrides):
    for name, (value, group) in overrides.items():
        CONF.set_override(name, value, group=group)


@pytest.fixture
def hosts(cloud, monkeypatch) -> Iterator[Hosts]:
    """Two hosts whose live migrations run on a pool of this test's own."""
    neutron = BindingNeutron()
    _conf(live_migration_mb_per_second=(FAST, 'fake_driver'))
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        managers = {}
        for host in (SRC, DST):
            mgr = manager.ComputeManager(
                host=host, driver=fake.FakeDriver(),
                reportclient=ScriptedReportClient(cloud.reportclient),
                compute_task_api=types.SimpleNamespace(), network_api_=neutron,
                volume_api=types.SimpleNamespace())
            mgr.driver.init_host(host)
            mgr.rt.update_available_resource(cctxt, host)
            managers[host] = mgr
        rpc = HostsRPC(managers)
        monkeypatch.setattr(compute_rpcapi, 'ComputeAPI', lambda: rpc)
        try:
            yield Hosts(cloud, cctxt, managers[SRC], managers[DST], rpc, neutron)
        finally:
            _until(lambda: _ended(managers.values()))
            for mgr in managers.values():
                if mgr.live_migrations.pool is not None:
                    mgr.live_migrations.pool.shutdown(wait=True)
            executor.wait_background(30)
            for name, group in (('live_migration_mb_per_second', 'fake_driver'),
                                ('fail_live_migration_on_hosts', 'fake_driver'),
                                ('max_concurrent_live_migrations', None)):
                CONF.clear_override(name, group=group)


def _ended(managers) -> bool:
    """Cancel the queued migrations, abort those the drivers run: whether none is left."""
    for mgr in managers:
        live_migration.stop(mgr)
        for job in list(mgr.driver.live_migrations._jobs.values()):
            try:
                job.abort()
            except exception.MigrationError:
                pass  # over already
    return not any(mgr.live_migrations.running for mgr in managers)


def _node(mgr: manager.ComputeManager) -> str:
    return mgr.rt.compute_nodes[mgr.host].uuid


def _checked(h: Hosts, source: manager.ComputeManager | None = None,
             dest: manager.ComputeManager | None = None, volume: bool = False) -> Moving:
    """A running server on the source with a port, as the conductor hands it over: the
    source's allocation the migration's, the destination claimed for the instance,
    both hosts' checks passed (the destination's port bindings made)."""
    cctxt = h.cctxt
    source, dest = source or h.src, dest or h.dst
    instance = hostdoubles.instance_on_host(source, cctxt, task_state='migrating')
    port = 'port-' + instance.uuid[:8]
    vif = h.neutron.port(port, source.host)
    source.driver.spawn(cctxt, instance, None, [], None, {}, [vif])
    instance.info_cache = objects.InstanceInfoCache(instance_uuid=instance.uuid,
                                                    network_info=[vif])
    instance.power_state = power_state.RUNNING
    instance.save()
    if volume:
        objects.BlockDeviceMapping(
            cctxt, instance_uuid=instance.uuid, source_type='volume',
            destination_type='volume', volume_id=str(uuid.uuid4()), attachment_id=str(uuid.uuid4()),
            device_name='/dev/vdb', boot_index=None, delete_on_termination=False,
            no_device=False, connection_info='{}').create()
    hostdoubles.start_action(cctxt, instance.uuid, 'live-migration')
    migration = hostdoubles.new_migration(cctxt, instance, dest.host, status='accepted',
                                          migration_type='live-migration')
    assert source.reportclient.move_allocations(cctxt, instance.uuid, migration.uuid)
    assert dest.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        _node(dest): {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}},
        'p1', 'u1')
    instance = _fresh(cctxt, instance.uuid)
    data = h.rpc.check_can_live_migrate_destination(cctxt, instance, dest.host, None,
                                                    migration)
    data.dest_zone = 'zone-' + dest.host
    return Moving(instance, migration, data, port)


def _fresh(cctxt, instance_uuid):
    return objects.Instance.get_by_uuid(cctxt, instance_uuid,
                                        expected_attrs=['flavor', 'info_cache'])


def _start(h: Hosts, moving: Moving) -> None:
    """The conductor's cast to the source."""
    assert moving.migration.dest_compute is not None
    h.rpc.live_migration(h.cctxt, _fresh(h.cctxt, moving.instance.uuid),
                         moving.migration.dest_compute, moving.data.block_migration,
                         moving.migration, moving.data)


def _until(what: Callable[[], object], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, 'still waiting for %s' % what
        time.sleep(0.01)


def _saved_migration(h: Hosts, moving: Moving) -> objects.Migration:
    return objects.Migration.get_by_id(h.cctxt, moving.migration.id)


def _copying(h: Hosts, moving: Moving) -> bool:
    """Whether the source's driver is copying the guest (it saved its first figures)."""
    return bool(_saved_migration(h, moving).memory_total)


def _over(h: Hosts, moving: Moving) -> None:
    """Wait until the source is done with the migration, then for the work it handed
    to the destination (the rollback there is a cast)."""
    lm = h.src.live_migrations
    _until(lambda: moving.instance.uuid not in lm.queued
           and moving.instance.uuid not in lm.running)
    executor.wait_background(30)


def _events(h: Hosts, moving: Moving) -> dict[str, tuple[str | None, str | None]]:
    (action,) = objects.InstanceActionList.get_by_instance_uuid(h.cctxt,
                                                                moving.instance.uuid)
    return {e.event: (e.host, e.result)
            for e in objects.InstanceActionEventList.get_by_action(h.cctxt, action.id)}


def _allocated(h: Hosts, consumer_uuid: str) -> list[str]:
    return sorted(h.cloud.reportclient.get_allocations_for_consumer(h.cctxt, consumer_uuid))


def _assert_on_destination(h: Hosts, moving: Moving, source_event: bool = True) -> None:
    saved = _fresh(h.cctxt, moving.instance.uuid)
    assert (saved.host, saved.node, saved.vm_state, saved.task_state, saved.power_state,
            saved.availability_zone) == (DST, DST, 'active', None, power_state.RUNNING,
                                         'zone-dst')
    assert [vif['details'] for vif in saved.info_cache.network_info] == [{'host': DST}]
    assert hostdoubles.fault(h.cctxt, saved.uuid) is None
    assert _saved_migration(h, moving).status == 'completed'
    assert _allocated(h, saved.uuid) == [_node(h.dst)]
    assert _allocated(h, moving.migration.uuid) == []
    assert h.neutron.bindings[moving.port] == {DST: 'ACTIVE'}
    assert saved.uuid in h.dst.driver.list_instance_uuids()
    assert saved.uuid not in h.src.driver.list_instance_uuids()
    events = _events(h, moving)
    for event, host in ((live_migration_dest.PRE_EVENT, DST),
                        (live_migration_dest.POST_EVENT, DST)):
        assert events[event] == (host, 'Success')
    if source_event:
        assert events[live_migration.LIVE_EVENT] == (SRC, 'Success')


def _assert_back_on_source(h: Hosts, moving: Moving, status: str,
                           fault: str | None) -> None:
    saved = _fresh(h.cctxt, moving.instance.uuid)
    assert (saved.host, saved.vm_state, saved.task_state, saved.power_state) == (
        SRC, 'active', None, power_state.RUNNING)
    if fault is None:
        assert hostdoubles.fault(h.cctxt, saved.uuid) is None
    else:
        message = hostdoubles.fault(h.cctxt, saved.uuid)
        assert message is not None and fault in message
    assert _saved_migration(h, moving).status == status
    assert _allocated(h, saved.uuid) == [_node(h.src)]
    assert _allocated(h, moving.migration.uuid) == []
    assert h.neutron.bindings[moving.port] == {SRC: 'ACTIVE'}
    assert ('rollback_live_migration_at_destination', DST) in h.rpc.sent
    assert saved.uuid in h.src.driver.list_instance_uuids()
    assert saved.uuid not in h.dst.driver.list_instance_uuids()
    events = _events(h, moving)
    assert events[live_migration.LIVE_EVENT] == (SRC, 'Error' if fault else 'Success')
    assert events[live_migration_dest.ROLLBACK_EVENT] == (DST, 'Success')


# -- the checks -------------------------------------------------------------------------------

def test_the_checks_bind_the_ports_inactive_on_the_destination(hosts):
    h = hosts
    moving = _checked(h)

    assert h.neutron.bindings[moving.port] == {SRC: 'ACTIVE', DST: 'INACTIVE'}
    assert (moving.data.bound_ports, moving.data.dest_host) == ([moving.port], DST)
    assert [vif['details'] for vif in moving.data.dest_network_info] == [{'host': DST}]
    # The fake hosts share no storage: 'auto' is a block migration.
    assert moving.data.block_migration is True
    events = _events(h, moving)
    assert events[live_migration_dest.CHECK_EVENT] == (DST, 'Success')
    assert events[live_migration.CHECK_SOURCE_EVENT] == (SRC, 'Success')


def test_a_source_that_refuses_leaves_no_binding_on_the_destination(hosts):
    h = hosts
    h.src.driver.check_can_live_migrate_source = _raise(
        exception.MigrationPreCheckError(reason='the guest uses a host device'))

    with pytest.raises(exception.MigrationPreCheckError, match='host device'):
        _checked(h)

    (port,) = h.neutron.bindings
    assert h.neutron.bindings[port] == {SRC: 'ACTIVE'}
    assert h.neutron.calls == [('create', DST), ('delete', DST)]


def test_a_server_with_volumes_is_refused_by_the_source(hosts):
    h = hosts

    with pytest.raises(exception.MigrationPreCheckError, match='volumes attached'):
        _checked(h, volume=True)

    (port,) = h.neutron.bindings
    assert h.neutron.bindings[port] == {SRC: 'ACTIVE'}


# -- the guest moves ---------------------------------------------------------------------------

def test_a_live_migration_ends_with_the_server_on_the_destination(hosts):
    h = hosts
    moving = _checked(h)

    _start(h, moving)
    _over(h, moving)

    _assert_on_destination(h, moving)
    assert h.neutron.calls == [('create', DST), ('activate', DST), ('delete', SRC)]
    saved = _saved_migration(h, moving)
    assert (saved.memory_total, saved.memory_processed, saved.memory_remaining) == (
        512 * MiB, 512 * MiB, 0)
    assert ('rollback_live_migration_at_destination', DST) not in h.rpc.sent


def test_without_binding_extended_the_ports_are_rebound_after_the_move(hosts):
    h = hosts
    h.neutron.extension = False
    moving = _checked(h)
    assert moving.data.bound_ports == []

    _start(h, moving)
    _over(h, moving)

    _assert_on_destination(h, moving)
    assert h.neutron.calls == [('bind', DST)]


# -- the guest stays -----------------------------------------------------------------------------

def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def test_a_destination_that_cannot_get_ready_rolls_the_migration_back(hosts):
    h = hosts
    moving = _checked(h)
    h.dst.driver.pre_live_migration = _raise(RuntimeError('no room for the disk'))

    _start(h, moving)
    _over(h, moving)

    _assert_back_on_source(h, moving, 'error', 'could not get ready')
    assert h.neutron.calls == [('create', DST), ('delete', DST)]
    assert _saved_migration(h, moving).memory_total is None  # the driver never ran
    assert _events(h, moving)[live_migration_dest.PRE_EVENT] == (DST, 'Error')


def test_a_migration_the_driver_fails_is_rolled_back(hosts):
    h = hosts
    _conf(fail_live_migration_on_hosts=([DST], 'fake_driver'))
    moving = _checked(h)

    _start(h, moving)
    _over(h, moving)

    _assert_back_on_source(h, moving, 'error', 'fake driver told to fail')
    assert h.neutron.calls == [('create', DST), ('delete', DST)]
    saved = _saved_migration(h, moving)
    assert (saved.memory_total, saved.memory_processed) == (512 * MiB, 256 * MiB)


def test_a_driver_that_raises_instead_of_recovering_is_rolled_back(hosts):
    h = hosts
    moving = _checked(h)
    h.src.driver.live_migration = _raise(RuntimeError('hypervisor connection lost'))

    _start(h, moving)
    _over(h, moving)

    _assert_back_on_source(h, moving, 'error', 'RuntimeError')


def _post_fails_at_destination(h: Hosts) -> Moving:
    moving = _checked(h)
    h.dst.driver.post_live_migration_at_destination = _raise(
        RuntimeError('cannot define the guest'))
    _start(h, moving)
    _over(h, moving)
    return moving


def test_a_destination_that_cannot_take_the_guest_over_leaves_the_server_in_error_there(
        hosts):
    h = hosts

    moving = _post_fails_at_destination(h)

    saved = _fresh(h.cctxt, moving.instance.uuid)
    assert (saved.host, saved.node, saved.vm_state, saved.task_state) == (
        DST, DST, 'error', None)
    assert hostdoubles.fault(h.cctxt, saved.uuid) == 'RuntimeError'
    assert _saved_migration(h, moving).status == 'error'
    assert _allocated(h, saved.uuid) == [_node(h.dst)]
    assert _allocated(h, moving.migration.uuid) == []
    assert h.neutron.bindings[moving.port][DST] == 'ACTIVE'
    events = _events(h, moving)
    assert events[live_migration.LIVE_EVENT] == (SRC, 'Error')
    assert events[live_migration_dest.POST_EVENT] == (DST, 'Error')


def test_a_destination_that_cannot_take_the_guest_over_leaves_no_source_binding(hosts):
    h = hosts

    moving = _post_fails_at_destination(h)

    assert h.neutron.bindings[moving.port] == {DST: 'ACTIVE'}


# -- abort and force complete ---------------------------------------------------------------------

def test_an_aborted_queued_migration_is_cancelled_and_the_running_one_by_the_driver(hosts):
    h = hosts
    _conf(max_concurrent_live_migrations=(1, None),
          live_migration_mb_per_second=(STALLED, 'fake_driver'))
    ahead, queued = _checked(h), _checked(h)
    _start(h, ahead)
    _until(lambda: _copying(h, ahead))
    _start(h, queued)
    assert _saved_migration(h, queued).status == 'queued'

    h.rpc.live_migration_abort(h.cctxt, _fresh(h.cctxt, queued.instance.uuid),
                               queued.migration.id)

    _assert_back_on_source(h, queued, 'cancelled', None)
    assert _events(h, queued)[live_migration.ABORT_EVENT] == (SRC, 'Success')
    assert _saved_migration(h, queued).memory_total is None  # it never started
    assert _saved_migration(h, ahead).status == 'running'

    h.rpc.live_migration_abort(h.cctxt, _fresh(h.cctxt, ahead.instance.uuid),
                               ahead.migration.id)
    _over(h, ahead)

    _assert_back_on_source(h, ahead, 'cancelled', None)
    assert _events(h, ahead)[live_migration.ABORT_EVENT] == (SRC, 'Success')


def test_a_server_deleted_during_its_migration_keeps_no_allocation_after_the_abort(hosts):
    """The rollback gives the source's allocation back to the instance; one deleted
    meanwhile (its delete freed what it held then) must not get it back for good."""
    h = hosts
    _conf(live_migration_mb_per_second=(STALLED, 'fake_driver'))
    moving = _checked(h)
    _start(h, moving)
    _until(lambda: _copying(h, moving))
    deleted = _fresh(h.cctxt, moving.instance.uuid)
    deleted.destroy()
    h.cloud.reportclient.delete_allocation_for_instance(h.cctxt, deleted.uuid)

    h.rpc.live_migration_abort(h.cctxt, moving.instance, moving.migration.id)
    _over(h, moving)

    assert _saved_migration(h, moving).status == 'cancelled'
    assert _allocated(h, moving.instance.uuid) == []
    assert _allocated(h, moving.migration.uuid) == []


def test_no_limit_of_concurrent_live_migrations_runs_them_all_at_once(hosts):
    h = hosts
    _conf(max_concurrent_live_migrations=(0, None),
          live_migration_mb_per_second=(STALLED, 'fake_driver'))
    first, second = _checked(h), _checked(h)

    _start(h, first)
    _start(h, second)

    _until(lambda: _copying(h, first) and _copying(h, second))
    for moving in (first, second):
        h.rpc.live_migration_abort(h.cctxt, _fresh(h.cctxt, moving.instance.uuid),
                                   moving.migration.id)
        _over(h, moving)
        _assert_back_on_source(h, moving, 'cancelled', None)


def test_an_abort_while_the_destination_gets_ready_cancels_once_it_is(hosts):
    h = hosts
    moving = _checked(h)
    entered, release = threading.Event(), threading.Event()
    real_pre = h.dst.driver.pre_live_migration

    def slow_pre(*args, **kwargs):
        entered.set()
        assert release.wait(30)
        return real_pre(*args, **kwargs)
    h.dst.driver.pre_live_migration = slow_pre
    _start(h, moving)
    assert entered.wait(30)
    assert _saved_migration(h, moving).status == 'preparing'

    h.rpc.live_migration_abort(h.cctxt, _fresh(h.cctxt, moving.instance.uuid),
                               moving.migration.id)
    release.set()
    _over(h, moving)

    _assert_back_on_source(h, moving, 'cancelled', None)
    assert _saved_migration(h, moving).memory_total is None  # the driver never ran
    assert _events(h, moving)[live_migration.ABORT_EVENT] == (SRC, 'Success')


def test_force_complete_makes_the_driver_finish_the_migration_at_once(hosts):
    h = hosts
    _conf(live_migration_mb_per_second=(STALLED, 'fake_driver'))
    moving = _checked(h)
    _start(h, moving)
    _until(lambda: _copying(h, moving))
    assert _saved_migration(h, moving).memory_processed < 512 * MiB

    h.rpc.live_migration_force_complete(h.cctxt, _fresh(h.cctxt, moving.instance.uuid))
    _over(h, moving)

    _assert_on_destination(h, moving)
    assert _saved_migration(h, moving).memory_processed == 512 * MiB
    assert _events(h, moving)[live_migration.FORCE_COMPLETE_EVENT] == (SRC, 'Success')


def test_force_complete_with_no_migration_running_fails_its_event_only(hosts):
    h = hosts
    moving = _checked(h)

    h.rpc.live_migration_force_complete(h.cctxt, moving.instance)

    assert _events(h, moving)[live_migration.FORCE_COMPLETE_EVENT] == (SRC, 'Error')
    assert _saved_migration(h, moving).status == 'accepted'


def test_the_limit_of_concurrent_live_migrations_is_each_hosts_own(hosts):
    h = hosts
    _conf(max_concurrent_live_migrations=(1, None),
          live_migration_mb_per_second=(STALLED, 'fake_driver'))
    there, back = _checked(h), _checked(h, source=h.dst, dest=h.src)
    _start(h, there)
    _until(lambda: _copying(h, there))

    _start(h, back)

    # The destination runs no live migration of its own: its first one starts.
    _until(lambda: _saved_migration(h, back).status != 'queued', timeout=5)


# -- a restart of the source in the middle ------------------------------------------------------

def _interrupted(h: Hosts, status: str) -> Moving:
    """A migration whose destination got ready, as a stop of the source left it."""
    moving = _checked(h)
    objects.InstanceActionEvent.event_start(h.cctxt, moving.instance.uuid,
                                            live_migration.LIVE_EVENT, host=SRC)
    moving.data = h.rpc.pre_live_migration(h.cctxt, moving.instance, DST, moving.data)
    moving.data.migration = moving.migration
    moving.migration.status = status
    moving.migration.save()
    return moving


def test_a_restart_rolls_back_a_migration_whose_server_is_still_here(hosts):
    h = hosts
    moving = _interrupted(h, 'running')
    assert moving.instance.uuid in h.dst.driver.list_instance_uuids()  # coming in

    live_migration.recover_interrupted(h.src, h.cctxt)
    executor.wait_background(30)

    _assert_back_on_source(h, moving, 'error', 'stopped during the live migration')
    assert h.neutron.calls == [('create', DST), ('delete', DST)]


def _taken_over(h: Hosts) -> Moving:
    """Interrupted after the destination took the server over."""
    moving = _interrupted(h, 'post-migrating')
    h.neutron.activate_port_bindings(h.cctxt, moving.instance, DST,
                                     moving.data.dest_network_info)
    h.src.driver.post_live_migration_at_source(h.cctxt, moving.instance, [], None,
                                               moving.data)
    h.rpc.post_live_migration_at_destination(h.cctxt, moving.instance, DST, True,
                                             moving.data)
    return moving


def test_a_stop_leaves_the_queued_migrations_to_the_restart_which_rolls_them_back(hosts):
    h = hosts
    _conf(max_concurrent_live_migrations=(1, None),
          live_migration_mb_per_second=(STALLED, 'fake_driver'))
    ahead, queued = _checked(h), _checked(h)
    _start(h, ahead)
    _until(lambda: _copying(h, ahead))
    _start(h, queued)

    live_migration.stop(h.src)
    h.rpc.live_migration_abort(h.cctxt, _fresh(h.cctxt, ahead.instance.uuid),
                               ahead.migration.id)
    _over(h, ahead)

    assert _saved_migration(h, queued).status == 'queued'  # it never started
    live_migration.recover_interrupted(h.src, h.cctxt)
    executor.wait_background(30)

    _assert_back_on_source(h, queued, 'error', 'stopped during the live migration')
    _assert_back_on_source(h, ahead, 'cancelled', None)


def test_a_restart_completes_a_migration_the_destination_took_over(hosts):
    h = hosts
    moving = _taken_over(h)

    live_migration.recover_interrupted(h.src, h.cctxt)

    _assert_on_destination(h, moving, source_event=False)
    assert h.neutron.calls == [('create', DST), ('activate', DST), ('delete', SRC)]


def test_a_restart_that_completes_a_migration_finishes_its_event(hosts):
    h = hosts
    moving = _taken_over(h)

    live_migration.recover_interrupted(h.src, h.cctxt)

    assert _events(h, moving)[live_migration.LIVE_EVENT] == (SRC, 'Success')
