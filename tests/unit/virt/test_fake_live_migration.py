"""The fake driver's live migration between two fake hosts: the pre-checks, the guest
coming in on the destination, the copy with its progress counters, and its four ends
(complete, aborted, forced to complete, failed half-way)."""
from __future__ import annotations

import threading

import pytest

from novalite import exception, objects
from novalite.compute import power_state
from novalite.conf import CONF
from novalite.virt import fake, fake_migration
from tests.unit.virt.conftest import make_instance

MiB = 1024 ** 2
GiB = 1024 ** 3
PORT = '6f0e5d4c-3b2a-4190-8f7e-6d5c4b3a2910'
MIGRATION = '2d1c0b9a-8f7e-4d6c-a5b4-c3d2e1f0a9b8'
VOLUME = {'volume_id': 'vol-1', 'attachment_id': 'att-1', 'boot_index': 0,
          'mount_device': '/dev/vda', 'delete_on_termination': False,
          'connection_info': {'driver_volume_type': 'rbd', 'serial': 'vol-1', 'data': {}}}
WAIT = 30


@pytest.fixture
def flags():
    """``flags(name=value)`` sets ``[fake_driver]`` options for one test."""
    names = []

    def override(**values):
        for name, value in values.items():
            CONF.set_override(name, value, group='fake_driver')
            names.append(name)

    yield override
    for name in names:
        CONF.clear_override(name, group='fake_driver')


@pytest.fixture
def hosts():
    """A running guest of 64 MiB and a 1 GiB root disk on ``src``; ``dst`` empty."""
    src, dst = fake.FakeDriver(), fake.FakeDriver()
    src.init_host('src')
    dst.init_host('dst')
    instance = make_instance(memory_mb=64, root_gb=1)
    src.spawn(None, instance, None, [], None, {}, network_info=[{'id': PORT}])
    return src, dst, instance


class RecordingMigration(objects.Migration):
    """A migration whose saves record its counters instead of reaching a database."""

    @classmethod
    def obj_name(cls):
        return 'Migration'

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.saves = []
        self.saved = threading.Condition()

    def save(self):
        with self.saved:
            self.saves.append({name: getattr(self, name) for name in (
                'memory_total', 'memory_processed', 'memory_remaining',
                'disk_total', 'disk_processed', 'disk_remaining')})
            self.saved.notify_all()

    def wait_for_saves(self, count):
        with self.saved:
            assert self.saved.wait_for(lambda: len(self.saves) >= count, timeout=WAIT)


class Flow:
    """The compute manager's side: ``post`` and ``recover`` record their calls and
    tell the two drivers, as compute/live_migration.py does over RPC."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.calls = []

    def post(self, context, instance, dest, block_migration, migrate_data):
        self.calls.append(('post', dest, block_migration, self.src.get_info(instance).state,
                           self.dst.get_info(instance).state))
        self.src.post_live_migration_at_source(context, instance, [], None, migrate_data)
        self.dst.post_live_migration_at_destination(context, instance, [{'id': PORT}],
                                                    block_migration, None)

    def recover(self, context, instance, dest, migrate_data, error, migration_status):
        self.calls.append(('recover', dest, error, migration_status))
        self.dst.rollback_live_migration_at_destination(context, instance, [], None, True,
                                                        migrate_data)


def prepare(src, dst, instance, block_migration=None):
    """The pre-checks on both hosts and pre_live_migration on the destination."""
    migrate_data = objects.LiveMigrateData.new(migration=RecordingMigration(uuid=MIGRATION))
    migrate_data = dst.check_can_live_migrate_destination(None, instance, block_migration,
                                                          migrate_data)
    migrate_data = src.check_can_live_migrate_source(None, instance, migrate_data)
    return dst.pre_live_migration(None, instance, [{'id': PORT}], None, migrate_data)


def migrate(src, dst, instance, migrate_data):
    flow = Flow(src, dst)
    src.live_migration(None, instance, 'dst', flow.post, flow.recover,
                       migrate_data.block_migration, migrate_data)
    return flow


def migrate_in_thread(src, dst, instance, migrate_data):
    """The migration on a thread of its own, once its first progress is saved."""
    flow = Flow(src, dst)
    thread = threading.Thread(target=src.live_migration, args=(
        None, instance, 'dst', flow.post, flow.recover, migrate_data.block_migration,
        migrate_data))
    thread.start()
    migrate_data.migration.wait_for_saves(1)
    return flow, thread


# -- pre-checks -------------------------------------------------------------------------

def test_the_destination_check_fills_what_the_source_needs(hosts):
    src, dst, instance = hosts
    data = dst.check_can_live_migrate_destination(None, instance, None,
                                                  objects.LiveMigrateData.new())
    assert (data.dest_host, data.target_connect_addr) == ('dst', CONF.my_ip)
    assert data.is_shared_instance_path is False
    assert data.block_migration is None


def test_a_destination_told_to_refuse_says_which_host(hosts, flags):
    src, dst, instance = hosts
    flags(fail_live_migration_precheck_on_hosts=['dst'])
    with pytest.raises(exception.MigrationPreCheckError, match='host dst'):
        dst.check_can_live_migrate_destination(None, instance, True,
                                               objects.LiveMigrateData.new())
    # Only the named hosts refuse.
    src.check_can_live_migrate_destination(None, instance, True,
                                           objects.LiveMigrateData.new())


def test_the_source_check_makes_auto_a_block_migration(hosts):
    src, dst, instance = hosts
    data = src.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())
    assert data.block_migration is True and data.is_shared_block_storage is False
    asked = objects.LiveMigrateData.new(block_migration=False)
    assert src.check_can_live_migrate_source(None, instance, asked).block_migration is False


def test_a_guest_without_local_disk_needs_no_block_migration(hosts):
    src, dst, instance = hosts
    instance.flavor.root_gb = 0
    src.spawn(None, instance, None, [], None, {},
              block_device_info={'block_device_mapping': [VOLUME]})
    data = src.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())
    assert data.block_migration is False and data.is_shared_block_storage is True


def test_the_source_check_takes_a_paused_guest_and_refuses_a_stopped_one(hosts):
    src, dst, instance = hosts
    src.pause(instance)
    src.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())
    src.power_off(instance)
    with pytest.raises(exception.MigrationPreCheckError, match='shutdown'):
        src.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())
    with pytest.raises(exception.MigrationPreCheckError, match='no guest'):
        dst.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())


# -- the destination's guest ------------------------------------------------------------

def test_pre_live_migration_records_the_guest_coming_in_paused(hosts):
    src, dst, instance = hosts
    prepare(src, dst, instance)
    assert dst.get_info(instance).state == power_state.PAUSED
    assert dst.interfaces(instance) == [PORT]
    assert instance.uuid in dst.list_instance_uuids()
    assert src.get_info(instance).state == power_state.RUNNING
    # The incoming guest is not one the source can send on.
    with pytest.raises(exception.MigrationPreCheckError):
        dst.check_can_live_migrate_source(None, instance, objects.LiveMigrateData.new())


def test_the_rollback_at_the_destination_removes_the_guest_coming_in_once(hosts):
    src, dst, instance = hosts
    data = prepare(src, dst, instance)
    for _ in range(2):
        dst.rollback_live_migration_at_destination(None, instance, [], None, True, data)
        assert instance.uuid not in dst.list_instance_uuids()
    # A guest of the host's own is not one that was coming in: it stays.
    src.rollback_live_migration_at_destination(None, instance, [], None, True, data)
    assert src.get_info(instance).state == power_state.RUNNING


def test_pre_live_migration_refuses_a_host_that_runs_the_guest(hosts):
    src, dst, instance = hosts
    with pytest.raises(exception.MigrationError, match='already has a guest'):
        src.pre_live_migration(None, instance, [], None, objects.LiveMigrateData.new())
    assert src.get_info(instance).state == power_state.RUNNING


# -- the migration ----------------------------------------------------------------------

def test_a_live_migration_moves_the_guest_and_reports_its_progress(hosts, flags):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=1e9)
    data = prepare(src, dst, instance)
    flow = migrate(src, dst, instance, data)
    # The source's driver left the destination's alone: its guest was still coming in.
    assert flow.calls == [('post', 'dst', True, power_state.RUNNING, power_state.PAUSED)]
    assert instance.uuid not in src.list_instance_uuids()
    assert dst.get_info(instance).state == power_state.RUNNING
    assert dst.interfaces(instance) == [PORT]
    saves = data.migration.saves
    assert saves[0]['memory_processed'] == 0 and saves[0]['memory_remaining'] == 64 * MiB
    assert saves[-1] == {'memory_total': 64 * MiB, 'memory_processed': 64 * MiB,
                         'memory_remaining': 0, 'disk_total': GiB, 'disk_processed': GiB,
                         'disk_remaining': 0}
    # A migrated guest is like any other: it can go back.
    back = prepare(dst, src, instance)
    assert back.block_migration is True
    with pytest.raises(exception.MigrationError, match='no live migration'):
        src.live_migration_abort(instance)


def test_a_migration_on_shared_storage_copies_no_disk(hosts, flags):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=1e9)
    data = prepare(src, dst, instance, block_migration=False)
    migrate(src, dst, instance, data)
    assert data.migration.saves[-1]['disk_total'] == 0
    assert data.migration.saves[-1]['memory_remaining'] == 0


def test_the_copied_memory_grows_between_saves(hosts, flags, monkeypatch):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=1.0)
    monkeypatch.setattr(fake_migration, 'PROGRESS_INTERVAL', 0.01)
    data = prepare(src, dst, instance)
    flow, thread = migrate_in_thread(src, dst, instance, data)
    data.migration.wait_for_saves(4)
    src.live_migration_abort(instance)
    thread.join(WAIT)
    saves = data.migration.saves[:4]
    processed = [save['memory_processed'] for save in saves]
    assert processed == sorted(set(processed)), processed
    for save in saves:
        assert save['memory_remaining'] == 64 * MiB - save['memory_processed']
        assert save['disk_remaining'] == GiB - save['disk_processed']


def test_an_aborted_migration_leaves_the_guest_on_the_source(hosts, flags):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=0.001)
    data = prepare(src, dst, instance)
    flow, thread = migrate_in_thread(src, dst, instance, data)
    src.live_migration_abort(instance)
    thread.join(WAIT)
    assert not thread.is_alive()
    assert flow.calls == [('recover', 'dst', None, 'cancelled')]
    assert src.get_info(instance).state == power_state.RUNNING
    assert instance.uuid not in dst.list_instance_uuids()
    assert data.migration.saves[-1]['memory_remaining'] > 0
    with pytest.raises(exception.MigrationError):
        src.live_migration_abort(instance)


def test_abort_and_force_complete_without_a_migration_are_refused(hosts):
    src, dst, instance = hosts
    with pytest.raises(exception.MigrationError, match='no live migration'):
        src.live_migration_abort(instance)
    with pytest.raises(exception.MigrationError, match='no live migration'):
        src.live_migration_force_complete(instance)


def test_a_forced_migration_pauses_the_guest_and_completes_at_once(hosts, flags):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=0.001)
    data = prepare(src, dst, instance)
    flow, thread = migrate_in_thread(src, dst, instance, data)
    src.live_migration_force_complete(instance)
    thread.join(WAIT)
    assert not thread.is_alive()
    assert flow.calls == [('post', 'dst', True, power_state.PAUSED, power_state.PAUSED)]
    assert dst.get_info(instance).state == power_state.RUNNING
    assert data.migration.saves[-1]['memory_remaining'] == 0
    assert data.migration.saves[-1]['disk_remaining'] == 0


def test_a_migration_to_a_failing_host_fails_half_way(hosts, flags):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=1e9, fail_live_migration_on_hosts=['dst'])
    data = prepare(src, dst, instance)
    flow = migrate(src, dst, instance, data)
    [(call, dest, error, status)] = flow.calls
    assert (call, dest, status) == ('recover', 'dst', 'error')
    assert isinstance(error, exception.MigrationError) and 'host dst' in str(error)
    assert data.migration.saves[-1]['memory_processed'] == 32 * MiB
    assert data.migration.saves[-1]['disk_processed'] == GiB // 2
    assert src.get_info(instance).state == power_state.RUNNING
    assert instance.uuid not in dst.list_instance_uuids()


def test_a_guest_gone_from_the_source_is_recovered_not_raised(hosts, flags):
    src, dst, instance = hosts
    data = prepare(src, dst, instance)
    src.destroy(None, instance)
    flow = migrate(src, dst, instance, data)
    [(call, dest, error, status)] = flow.calls
    assert (call, status) == ('recover', 'error')
    assert isinstance(error, exception.InstanceNotFound)
    assert instance.uuid not in dst.list_instance_uuids()


def test_a_progress_that_cannot_be_saved_does_not_stop_the_migration(hosts, flags,
                                                                      monkeypatch):
    src, dst, instance = hosts
    flags(live_migration_mb_per_second=1e9)
    data = prepare(src, dst, instance)

    def unreachable():
        raise exception.NovaliteException('the conductor is away')

    monkeypatch.setattr(data.migration, 'save', unreachable)
    flow = migrate(src, dst, instance, data)
    assert [call[0] for call in flow.calls] == ['post']
