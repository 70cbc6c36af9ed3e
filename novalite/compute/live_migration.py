"""Live migration on the source host (Nova's ``_do_live_migration`` and after).

``queue`` (a cast from the conductor) puts the migration on the host's live migration
pool (``[DEFAULT] max_concurrent_live_migrations`` at once; the others ``queued``).
It then runs: ``preparing`` while the destination gets ready (``pre_live_migration``,
a call), ``running`` while the driver moves the guest, which ends in exactly one of

- ``post``: the guest runs on the destination. The destination's port bindings become
  the active ones, the source unplugs and removes what is left of the guest, the
  destination takes the instance over (``post_live_migration_at_destination``, a
  call), the source's allocation (held by the migration) and port bindings go, the
  migration is ``completed``;
- ``rollback``: the guest still runs here. The allocation goes back to the instance
  on this host alone, the destination's bindings and what it made go, the migration
  is ``error`` (``cancelled`` for an abort) and the server ACTIVE here, with a fault
  when it failed.

No instance lock is held while a migration runs (abort and force complete must reach
it); the API refuses other actions while the task is ``migrating``.
"""
from __future__ import annotations

import threading
from concurrent import futures
from typing import TYPE_CHECKING

import futurist
from oslo_log import log as logging

from novalite import exception, executor, objects
from novalite.compute import consoles, task_states, vm_states
from novalite.compute import rpcapi as compute_rpcapi
from novalite.compute.operation import recorded
from novalite.conf import CONF
from novalite.objects import instance_fault

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

LIVE_EVENT = 'compute_live_migration'
CHECK_SOURCE_EVENT = 'compute_check_can_live_migrate_source'
ABORT_EVENT = 'compute_live_migration_abort'
FORCE_COMPLETE_EVENT = 'compute_live_migration_force_complete'
# ``max_concurrent_live_migrations = 0``: no limit of novalite's own (threads are made
# as migrations come; this only bounds a runaway).
UNLIMITED = 1000
IN_PROGRESS = ('queued', 'preparing', 'running', 'post-migrating')


def _rpcapi() -> compute_rpcapi.ComputeAPI:
    return compute_rpcapi.ComputeAPI()


class LiveMigrations:
    """The live migrations this host runs as source, by instance uuid: the queued ones
    with their future (an abort cancels it), the running ones, and the aborts asked
    for before the driver started (honoured once the destination is ready)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # The host's own pool (Nova's _live_migration_executor), made on first use.
        self.pool: futurist.ThreadPoolExecutor | futurist.GreenThreadPoolExecutor | None = None
        self.queued: dict[str, tuple[objects.LiveMigrateData, futures.Future[None]]] = {}
        self.running: dict[str, objects.Migration] = {}
        self.in_driver: set[str] = set()
        self.abort_asked: set[str] = set()


def stop(mgr: ComputeManager) -> None:
    """Service stop: the queued migrations do not start (``init_host`` rolls back what
    a stop interrupted), the pool takes no more."""
    lm = mgr.live_migrations
    with lm.lock:
        queued, lm.queued = lm.queued, {}
        pool, lm.pool = lm.pool, None
    for _data, future in queued.values():
        future.cancel()
    if pool is not None:
        pool.shutdown(wait=False)


def _status(migration: objects.Migration, status: str) -> None:
    migration.status = status
    migration.save()


# -- the source's pre-check (called by the destination's) ------------------------------

def check_can_live_migrate_source(mgr: ComputeManager, context: RequestContext,
                                  instance: objects.Instance,
                                  migrate_data: objects.LiveMigrateData
                                  ) -> objects.LiveMigrateData:
    """The driver's check; a server with volumes is refused (novalite does not move
    volume attachments live yet).

    :raises MigrationPreCheckError: this host cannot send the server
    """
    with recorded(context, instance.uuid, CHECK_SOURCE_EVENT, mgr.host):
        bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(context, instance.uuid)
        if any(bdm.is_volume for bdm in bdms):
            raise exception.MigrationPreCheckError(
                reason='the server has volumes attached, which novalite cannot move live '
                       'yet (cold migration moves them)')
        return mgr.driver.check_can_live_migrate_source(context, instance, migrate_data)


# -- queue and run ---------------------------------------------------------------------

def queue(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, dest: str,
          block_migration: bool, migration: objects.Migration,
          migrate_data: objects.LiveMigrateData) -> None:
    """``queued`` on this host's live migration pool."""
    _status(migration, 'queued')
    migrate_data.migration = migration
    workers = CONF.max_concurrent_live_migrations or UNLIMITED
    lm = mgr.live_migrations
    with lm.lock:
        # A pool per host (in one process, novalite-all or tests, hosts do not queue
        # behind each other); registered before the pool can start it: ``_run`` takes
        # the lock first.
        if lm.pool is None:
            lm.pool = executor.make_pool(workers)
        future = lm.pool.submit(executor.carrying(_run), mgr, context, instance, dest,
                                block_migration, migrate_data)
        lm.queued[instance.uuid] = (migrate_data, future)


def _run(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, dest: str,
         block_migration: bool, migrate_data: objects.LiveMigrateData) -> None:
    lm = mgr.live_migrations
    migration = migrate_data.migration
    assert migration is not None, 'queue() sets it'
    with lm.lock:
        lm.queued.pop(instance.uuid, None)
        lm.running[instance.uuid] = migration
    try:
        _live_migrate(mgr, context, instance, dest, block_migration, migrate_data)
    except Exception:
        LOG.exception('Live migration of %s to %s failed', instance.uuid, dest)
    finally:
        with lm.lock:
            lm.running.pop(instance.uuid, None)
            lm.in_driver.discard(instance.uuid)
            lm.abort_asked.discard(instance.uuid)


def _live_migrate(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  dest: str, block_migration: bool,
                  migrate_data: objects.LiveMigrateData) -> None:
    migration = migrate_data.migration
    assert migration is not None
    lm = mgr.live_migrations
    objects.InstanceActionEvent.event_start(context, instance.uuid, LIVE_EVENT, host=mgr.host)
    try:
        _status(migration, 'preparing')
        ready = _rpcapi().pre_live_migration(context, instance, dest, migrate_data)
    except Exception as exc:
        LOG.warning('The destination %s could not get ready for %s: %s', dest,
                    instance.uuid, exc)
        rollback(mgr, context, instance, dest, migrate_data, exc, 'error')
        return
    # The destination's answer, with this host's Migration (the one progress is saved on).
    ready.migration = migration
    with lm.lock:
        aborted = instance.uuid in lm.abort_asked
        if not aborted:
            lm.in_driver.add(instance.uuid)
    if aborted:
        rollback(mgr, context, instance, dest, ready, None, 'cancelled')
        return
    _status(migration, 'running')
    ended: list[str] = []

    def post_method(context: RequestContext, instance: objects.Instance, dest: str,
                    block_migration: bool, migrate_data: objects.LiveMigrateData) -> None:
        ended.append('post')
        post(mgr, context, instance, dest, block_migration, migrate_data)

    def recover_method(context: RequestContext, instance: objects.Instance, dest: str,
                       migrate_data: objects.LiveMigrateData, error: BaseException | None,
                       migration_status: str) -> None:
        ended.append('rollback')
        rollback(mgr, context, instance, dest, migrate_data, error, migration_status)

    try:
        mgr.driver.live_migration(context, instance, dest, post_method, recover_method,
                                  block_migration, ready)
    except Exception as exc:
        if ended:
            raise
        LOG.warning('Live migration of %s to %s failed in the driver: %s',
                    instance.uuid, dest, exc)
        rollback(mgr, context, instance, dest, ready, exc, 'error')
        return
    if not ended:
        # A driver that returned without saying how it ended: the guest is still here.
        rollback(mgr, context, instance, dest, ready,
                 exception.MigrationError(reason='the driver ended without an outcome'),
                 'error')


# -- the guest runs on the destination ----------------------------------------------------

def post(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, dest: str,
         block_migration: bool, migrate_data: objects.LiveMigrateData) -> None:
    """Nova's ``_post_live_migration``: hand the instance to the destination, free this
    host. A failure now cannot move the guest back: the server goes to ERROR on the
    destination (where its guest runs) with a fault."""
    migration = migrate_data.migration
    assert migration is not None
    network_info = instance.info_cache.network_info
    try:
        _status(migration, 'post-migrating')
        if migrate_data.bound_ports:
            mgr.network_api.activate_port_bindings(context, instance, dest,
                                                   migrate_data.dest_network_info)
        mgr.driver.post_live_migration_at_source(context, instance, network_info, None,
                                                 migrate_data)
        _rpcapi().post_live_migration_at_destination(context, instance, dest,
                                                     block_migration, migrate_data)
    except Exception as exc:
        LOG.exception('Live migration of %s to %s could not be finished', instance.uuid,
                      dest)
        _post_failed(mgr, context, instance, dest, migrate_data, exc)
        return
    _free_source(mgr, context, instance, migration, migrate_data)
    _status(migration, 'completed')
    refresh_resources(mgr, context)
    objects.InstanceActionEvent.event_finish(context, instance.uuid, LIVE_EVENT, host=mgr.host)
    LOG.info('Instance %s live-migrated from %s to %s', instance.uuid, mgr.host, dest)


def refresh_resources(mgr: ComputeManager, context: RequestContext) -> None:
    """The host's resource usage read again now that a guest left or arrived, as
    Nova's ``_post_live_migration`` does (the periodic audit may be a minute away, and
    a claim on this host counts what the tracker has)."""
    for nodename in mgr.driver.get_available_nodes():
        try:
            mgr.rt.update_available_resource(context, nodename)
        except Exception:
            LOG.exception('Could not update the resources of node %s', nodename)


def _free_source(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 migration: objects.Migration, migrate_data: objects.LiveMigrateData) -> None:
    """What this host held for the server: its allocation (the migration's), its port
    bindings, the console tokens naming it. Each part on its own."""
    try:
        mgr.reportclient.delete_allocation_for_instance(context, migration.uuid)
    except Exception:
        LOG.exception('Could not free the allocation of migration %s on %s',
                      migration.uuid, mgr.host)
    if migrate_data.bound_ports:
        try:
            mgr.network_api.delete_port_bindings(context, instance, mgr.host,
                                                 migrate_data.bound_ports)
        except Exception:
            LOG.exception('Could not delete the port bindings of %s on %s',
                          instance.uuid, mgr.host)
    try:
        consoles.clean_tokens(context, instance.uuid)
    except Exception:
        LOG.exception('Could not delete the console tokens of %s', instance.uuid)


def _post_failed(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 dest: str, migrate_data: objects.LiveMigrateData,
                 exc: BaseException) -> None:
    migration = migrate_data.migration
    assert migration is not None
    try:
        _status(migration, 'error')
    except Exception:
        LOG.exception('Could not mark migration %s in error', migration.uuid)
    # The guest left: this host's share goes all the same, as Nova.
    _free_source(mgr, context, instance, migration, migrate_data)
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=mgr.host)
    instance.host = dest
    instance.node = migration.dest_node
    instance.vm_state = vm_states.ERROR
    instance.task_state = None
    try:
        instance.save()
    except exception.InstanceNotFound:
        LOG.info('Instance %s was deleted meanwhile', instance.uuid)
    message, trace = objects.InstanceActionEvent.format_error(exc)
    objects.InstanceActionEvent.event_finish(context, instance.uuid, LIVE_EVENT,
                                             exc_val=message, exc_tb=trace, host=mgr.host)


# -- the guest stays here ----------------------------------------------------------------

def rollback(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, dest: str,
             migrate_data: objects.LiveMigrateData, error: BaseException | None,
             migration_status: str) -> None:
    """Nova's ``_rollback_live_migration``: everything back on this host. Each part is
    tried even when another fails."""
    migration = migrate_data.migration
    assert migration is not None
    try:
        # The instance's claim on the destination is replaced by this host's.
        mgr.reportclient.move_allocations(context, migration.uuid, instance.uuid,
                                          target_type='INSTANCE')
    except Exception:
        LOG.exception('Could not give the allocation of migration %s back to %s',
                      migration.uuid, instance.uuid)
    if migrate_data.bound_ports:
        try:
            mgr.network_api.delete_port_bindings(context, instance, dest,
                                                 migrate_data.bound_ports)
        except Exception:
            LOG.exception('Could not delete the port bindings of %s on %s',
                          instance.uuid, dest)
    try:
        _rpcapi().rollback_live_migration_at_destination(
            context, instance, dest, not migrate_data.is_shared_instance_path, migrate_data)
    except Exception:
        LOG.exception('Could not ask %s to remove what it made for %s', dest, instance.uuid)
    try:
        _status(migration, migration_status)
    except Exception:
        LOG.exception('Could not mark migration %s %s', migration.uuid, migration_status)
    if error is not None:
        try:
            instance_fault.add_instance_fault_from_exc(context, instance, error,
                                                       host=mgr.host)
        except Exception:
            LOG.exception('Could not record the fault of %s', instance.uuid)
    if not _back_here(mgr, instance):
        # Deleted meanwhile: its delete freed what it held then; the allocation given
        # back to it above would outlive it.
        try:
            mgr.reportclient.delete_allocation_for_instance(context, instance.uuid)
        except Exception:
            LOG.exception('Could not free the allocation of deleted instance %s',
                          instance.uuid)
        return
    if error is not None:
        message, trace = objects.InstanceActionEvent.format_error(error)
        objects.InstanceActionEvent.event_finish(context, instance.uuid, LIVE_EVENT,
                                                 exc_val=message, exc_tb=trace,
                                                 host=mgr.host)
    else:
        objects.InstanceActionEvent.event_finish(context, instance.uuid, LIVE_EVENT,
                                                 host=mgr.host)
    LOG.info('Live migration of %s to %s rolled back (%s)', instance.uuid, dest,
             migration_status)


def _back_here(mgr: ComputeManager, instance: objects.Instance) -> bool:
    """The instance on this host with no task, its state the guest's.

    :returns: False when the instance was deleted meanwhile
    """
    instance.host = mgr.host
    if instance.vm_state not in (vm_states.ACTIVE, vm_states.PAUSED):
        instance.vm_state = vm_states.ACTIVE
    instance.task_state = None
    try:
        instance.power_state = mgr.driver.get_info(instance).state
    except Exception:
        LOG.debug('No power state for %s after the rollback', instance.uuid)
    try:
        instance.save(expected_task_state=[task_states.MIGRATING, None])
    except exception.InstanceNotFound:
        LOG.info('Instance %s was deleted meanwhile', instance.uuid)
        return False
    except exception.UnexpectedTaskStateError as err:
        LOG.info('Not rolling %s back: %s', instance.uuid, err)
        return 'deleting' not in str(err)
    return True


# -- abort and force complete --------------------------------------------------------------

def abort(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
          migration_id: int) -> None:
    """A queued migration is cancelled (and rolled back); one whose destination is
    getting ready ends once it is; a running one is aborted by the driver, which then
    rolls it back."""
    lm = mgr.live_migrations
    with recorded(context, instance.uuid, ABORT_EVENT, mgr.host, swallow=True):
        cancelled: objects.LiveMigrateData | None = None
        with lm.lock:
            queued = lm.queued.get(instance.uuid)
            if (queued is not None and queued[0].migration is not None
                    and queued[0].migration.id == migration_id and queued[1].cancel()):
                lm.queued.pop(instance.uuid)
                cancelled = queued[0]
            elif instance.uuid in lm.running and instance.uuid not in lm.in_driver:
                lm.abort_asked.add(instance.uuid)
                return
        if cancelled is None:
            mgr.driver.live_migration_abort(instance)
            return
        assert cancelled.migration is not None
        dest = cancelled.migration.dest_compute
        assert dest is not None, 'the conductor records it'
        rollback(mgr, context, instance, dest, cancelled, None, 'cancelled')


def force_complete(mgr: ComputeManager, context: RequestContext,
                   instance: objects.Instance) -> None:
    with recorded(context, instance.uuid, FORCE_COMPLETE_EVENT, mgr.host, swallow=True):
        mgr.driver.live_migration_force_complete(instance)


# -- after a restart --------------------------------------------------------------------------

def recover_interrupted(mgr: ComputeManager, context: RequestContext) -> None:
    """``init_host``: live migrations from this host that a stop interrupted. The
    instance still on this host is rolled back (the guest never left, or the migration
    died with this process); one the destination already took over has this host's
    share freed and its migration completed."""
    migrations = objects.MigrationList.get_by_filters(context, {
        'source_compute': mgr.host, 'migration_type': 'live-migration',
        'status': list(IN_PROGRESS)})
    for migration in migrations:
        try:
            _recover(mgr, context, migration)
        except Exception:
            LOG.exception('Could not recover live migration %s', migration.uuid)


def _recover(mgr: ComputeManager, context: RequestContext, migration: objects.Migration) -> None:
    assert migration.instance_uuid is not None
    try:
        instance = objects.Instance.get_by_uuid(context, migration.instance_uuid)
    except exception.InstanceNotFound:
        _status(migration, 'error')
        return
    data = objects.LiveMigrateData.new(migration=migration)
    data.bound_ports = [vif['id'] for vif in instance.info_cache.network_info or []]
    dest = migration.dest_compute
    if instance.host == mgr.host or dest is None:
        LOG.warning('Live migration %s of %s was interrupted by a restart of %s; rolling '
                    'it back', migration.uuid, instance.uuid, mgr.host)
        rollback(mgr, context, instance, dest or mgr.host, data,
                 exception.MigrationError(
                     reason='the compute service of the source host %s stopped during '
                            'the live migration' % mgr.host), 'error')
        return
    LOG.warning('Live migration %s of %s was interrupted after %s took it over; freeing '
                'what %s held', migration.uuid, instance.uuid, dest, mgr.host)
    _free_source(mgr, context, instance, migration, data)
    _status(migration, 'completed')
    objects.InstanceActionEvent.event_finish(context, instance.uuid, LIVE_EVENT, host=mgr.host)
