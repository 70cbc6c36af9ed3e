"""The compute API's moves: resize, confirm and revert, cold and live migration,
evacuation.

Each checks the state and the lock, records its action, sets the task state and hands
the move to the conductor (which schedules and records a Migration) or, for confirm
and revert, to the host that holds the other half of the move.

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novalite import availability_zones, exception, objects, quota
from novalite.compute import (
    disk_config,
    instance_actions,
    instance_edit,
    task_states,
    vm_states,
)
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

RESIZE_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED)
LIVE_MIGRATE_VM_STATES = (vm_states.ACTIVE, vm_states.PAUSED)
EVACUATE_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.ERROR)
# What an abort may also cancel from API 2.65: a live migration not started yet.
ABORTABLE_QUEUED = ('queued', 'preparing')

# -- resize and cold migration ----------------------------------------------------


def resize(api: API, context: RequestContext, instance: objects.Instance,
           flavor: objects.Flavor | None = None, clean_shutdown: bool = True,
           host_name: str | None = None, auto_disk_config: bool | None = None) -> None:
    """Resize to ``flavor`` (a Flavor), or cold-migrate when it is None (then
    optionally to ``host_name``, API 2.56).

    :raises CannotResizeToSameFlavor: (400) ``flavor`` is the current one
    :raises CannotResizeDisk: (400) a flavor with no root disk for one that has one
    :raises TooManyInstances: (403) the bigger flavor passes the quota
    :raises ComputeHostNotFound: (400) ``host_name`` is no compute host
    :raises AutoDiskConfigDisabledByImage: (400) AUTO, and the image disables it
    :raises NoValidHost: (400) no host can take the server, which stays as it was
    """
    instance_edit.check_instance_lock(context, instance)
    method = 'resize' if flavor is not None else 'migrate'
    instance_edit.check_instance_state(instance, method, RESIZE_VM_STATES)
    current = instance.flavor
    if flavor is None:
        flavor = current
    else:
        _check_new_flavor(context, instance, current, flavor)
    disk_config.check_instance(instance, auto_disk_config)
    with api.host_context(context, instance) as cctxt:
        if host_name is not None:
            _check_target_host(cctxt, instance, host_name)
        instance.task_state = task_states.RESIZE_PREP
        instance.progress = 0
        # As Nova: a resize or cold migration without a choice ends MANUAL.
        instance.auto_disk_config = bool(auto_disk_config)
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(
            cctxt, instance.uuid, instance_actions.RESIZE if flavor.id != current.id
            else instance_actions.MIGRATE, want_result=False)
        api.compute_task_api.migrate_server(cctxt, instance, flavor,
                                             clean_shutdown=clean_shutdown,
                                             host=host_name)


def _check_new_flavor(context: RequestContext, instance: objects.Instance, current: objects.Flavor,
                      flavor: objects.Flavor) -> None:
    if flavor.id == current.id:
        raise exception.CannotResizeToSameFlavor()
    if not flavor.root_gb and current.root_gb:
        raise exception.CannotResizeDisk(
            reason='Resize to zero disk flavor is not allowed.')
    deltas = {'cores': flavor.vcpus - current.vcpus,
              'ram': flavor.memory_mb - current.memory_mb}
    deltas = {k: v for k, v in deltas.items() if v > 0}
    if deltas:
        quota.check_deltas(context, dict(deltas, instances=0), instance.project_id,
                           instance.user_id)


def confirm_resize(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """:raises MigrationNotFoundByStatus: the server has no finished resize (400)"""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'confirmResize', (vm_states.RESIZED,))
    with api.host_context(context, instance) as cctxt:
        migration = objects.Migration.get_by_instance_and_status(cctxt, instance.uuid,
                                                                 'finished')
        migration.status = 'confirming'
        migration.save()
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.CONFIRM_RESIZE,
                                            want_result=False)
        api.compute_rpcapi.confirm_resize(cctxt, instance, migration)


def revert_resize(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """:raises MigrationNotFoundByStatus: the server has no finished resize (400)"""
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'revertResize', (vm_states.RESIZED,))
    with api.host_context(context, instance) as cctxt:
        migration = objects.Migration.get_by_instance_and_status(cctxt, instance.uuid,
                                                                 'finished')
        instance.task_state = task_states.RESIZE_REVERTING
        # Back to the source host, so back to its zone.
        assert migration.source_compute is not None, 'a resize records its source'
        instance.availability_zone = availability_zones.host_zone(
            context, migration.source_compute)
        instance.save(expected_task_state=[None])
        migration.status = 'reverting'
        migration.save()
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.REVERT_RESIZE,
                                            want_result=False)
        api.compute_rpcapi.revert_resize(cctxt, instance, migration)


# -- live migration ------------------------------------------------------------------


def live_migrate(api: API, context: RequestContext, instance: objects.Instance,
                 block_migration: bool | None, host_name: str | None,
                 force: bool | None = None, async_: bool = True) -> None:
    """Record the live migration and hand it to the conductor.

    :param block_migration: None for ``auto`` (2.25): the hosts decide from their
        storage
    :param host_name: the destination asked for, None to let the scheduler choose
    :param force: API 2.30 to 2.67: True takes ``host_name`` as it is, False has the
        scheduler check it (from 2.68 always False); None, before 2.30, takes a named
        host as it is, as Nova
    :param async_: API 2.34 and later: a cast (errors end in the migration and the
        action's event); before, a call whose pre-check errors are raised
    :raises ComputeHostNotFound: (400) ``host_name`` is no compute host
    :raises MigrationPreCheckError: (400, before 2.34) the move is not possible
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'os-migrateLive',
                                       LIVE_MIGRATE_VM_STATES)
    with api.host_context(context, instance) as cctxt:
        # Only whether the host exists is checked here; the conductor refuses the
        # server's own host as a pre-check error recorded in the migration, as Nova.
        if host_name is not None and objects.Service.get_by_host_and_binary(
                cctxt, host_name, 'novalite-compute') is None:
            raise exception.ComputeHostNotFound(host=host_name)
        instance.task_state = task_states.MIGRATING
        instance.save(expected_task_state=[None])
        migration = _migration(cctxt, instance, 'live-migration', host_name)
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.LIVE_MIGRATION,
                                            want_result=False)
        api.compute_task_api.live_migrate_instance(
            cctxt, instance, host_name, block_migration, migration, async_=async_,
            force=host_name is not None and force is not False)


def live_migrate_force_complete(api: API, context: RequestContext, instance: objects.Instance,
                                migration_id: int) -> None:
    """Have the source make the server's running live migration converge now (API
    2.22; the driver pauses the guest, or switches to post-copy).

    :raises InstanceIsLocked: (409) the server is locked and the caller no admin
    :raises InstanceInvalidState: (409) the server is not ACTIVE and migrating
    :raises MigrationNotFoundForInstance: no such migration of the server
    :raises InvalidMigrationState: (400) the migration is not ``running``
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'force_complete', (vm_states.ACTIVE,),
                                       (task_states.MIGRATING,))
    # The source's service is not checked: a cast to a host that is down is lost, as in
    # Nova.
    with api.cell_context(context, instance) as cctxt:
        migration = _live_migration_of(api, cctxt, instance, migration_id)
        if migration.status != 'running':
            raise exception.InvalidMigrationState(migration_id=migration_id,
                                                  instance_uuid=instance.uuid,
                                                  state=migration.status,
                                                  method='force complete')
        objects.InstanceAction.action_start(
            cctxt, instance.uuid, instance_actions.LIVE_MIGRATION_FORCE_COMPLETE,
            want_result=False)
        api.compute_rpcapi.live_migration_force_complete(cctxt, instance)


def live_migrate_abort(api: API, context: RequestContext, instance: objects.Instance,
                       migration_id: int, support_abort_in_queue: bool = False) -> None:
    """Cancel the server's live migration (API 2.24): a ``running`` one, and from
    2.65 (``support_abort_in_queue``) one still ``queued`` or ``preparing``. The
    source cancels it; the server stays where it is, ACTIVE.

    :raises InstanceIsLocked: (409) the server is locked and the caller no admin
    :raises InstanceInvalidState: (409) the server is not migrating
    :raises MigrationNotFoundForInstance: (404) no such migration of the server
    :raises InvalidMigrationState: (400) the migration's status does not allow it
    """
    instance_edit.check_instance_lock(context, instance)
    if instance.task_state != task_states.MIGRATING:
        raise exception.InstanceInvalidState(
            attr='task_state', instance_uuid=instance.uuid, state=instance.task_state,
            method='abort live migration')
    allowed = ABORTABLE_QUEUED + ('running',) if support_abort_in_queue else ('running',)
    # The source's service is not checked: a cast to a host that is down is lost, as in
    # Nova.
    with api.cell_context(context, instance) as cctxt:
        migration = _live_migration_of(api, cctxt, instance, migration_id)
        if migration.status not in allowed:
            raise exception.InvalidMigrationState(migration_id=migration_id,
                                                  instance_uuid=instance.uuid,
                                                  state=migration.status,
                                                  method='abort live migration')
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.LIVE_MIGRATION_CANCEL,
                                            want_result=False)
        api.compute_rpcapi.live_migration_abort(cctxt, instance, migration.id)


def _live_migration_of(api: API, context: RequestContext, instance: objects.Instance,
                       migration_id: int) -> objects.Migration:
    """:raises MigrationNotFoundForInstance: ``migration_id`` is not the server's"""
    try:
        return api.get_migration_by_id_and_instance(context, migration_id, instance.uuid)
    except exception.MigrationNotFound as exc:
        raise exception.MigrationNotFoundForInstance(migration_id=migration_id,
                                                     instance_id=instance.uuid) from exc


# -- evacuation ----------------------------------------------------------------------


def evacuate(api: API, context: RequestContext, instance: objects.Instance, host: str | None,
             admin_password: str | None) -> None:
    """Rebuild a server of a host whose compute service is down elsewhere.

    :raises ComputeServiceInUse: (400) its compute service is up
    :raises ComputeHostNotFound: (404) ``host`` is no compute host
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'evacuate', EVACUATE_VM_STATES)
    if not instance.obj_attr_is_set('id') or not instance.host:
        raise exception.Conflict(message='Instance %s is not on a compute host.'
                                 % instance.uuid)
    image = api.image_api.get(context, instance.image_ref) if instance.image_ref \
        else None
    with api.cell_context(context, instance) as cctxt:
        service = objects.Service.get_by_host_and_binary(cctxt, instance.host,
                                                         'novalite-compute')
        if service is not None and api.servicegroup_api.service_is_up(service):
            raise exception.ComputeServiceInUse(host=instance.host)
        if host is not None:
            _check_target_host(cctxt, instance, host)
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        migration = _migration(cctxt, instance, 'evacuation', host)
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.EVACUATE,
                                            want_result=False)
        api.compute_task_api.evacuate_instance(cctxt, instance, host, migration,
                                                image, admin_password)


def _check_target_host(context: RequestContext, instance: objects.Instance, host: str) -> None:
    """:raises ComputeHostNotFound: no compute service runs on ``host``
    :raises MigrationPreCheckError: ``host`` is where the server already is"""
    if objects.Service.get_by_host_and_binary(context, host, 'novalite-compute') is None:
        raise exception.ComputeHostNotFound(host=host)
    if host == instance.host:
        raise exception.MigrationPreCheckError(
            reason='the server is already on host %s' % host)


def _migration(context: RequestContext, instance: objects.Instance, migration_type: str,
               dest: str | None) -> Any:
    """The Migration of a live migration or evacuation, created ``accepted``."""
    migration = objects.Migration(
        context, instance_uuid=instance.uuid, source_compute=instance.host,
        source_node=instance.node, dest_compute=dest, dest_node=None, dest_host=None,
        old_instance_type_id=instance.flavor.id, new_instance_type_id=instance.flavor.id,
        status='accepted', migration_type=migration_type, hidden=False,
        cross_cell_move=False, user_id=instance.user_id, project_id=instance.project_id)
    migration.create()
    return migration
