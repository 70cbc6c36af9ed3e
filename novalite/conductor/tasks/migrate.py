"""Moving servers in the conductor: resize and cold migration, evacuation (Nova's
migrate_server and rebuild_instance with a dead source host); live migration is in
``live_migrate.py``.

Every move records a Migration and, before the scheduler runs, hands the instance's
allocation on the source to the migration as consumer (Nova's migration-based
allocations): the scheduler then claims the destination for the instance, and the
source stays held until the move is confirmed or reverted. A move that fails here puts
the allocation back on the instance, the migration in ``error`` and the instance back
in its state with a fault.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.conductor.tasks import build, cell
from novalite.conf import CONF
from novalite.objects import instance_fault

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

MIGRATE_EVENT = 'conductor_migrate_server'
EVACUATE_EVENT = 'conductor_rebuild_server'


def _new_migration(context: RequestContext, instance: objects.Instance, new_flavor: objects.Flavor,
                   migration_type: str, status: str) -> objects.Migration:
    migration = objects.Migration(
        context, instance_uuid=instance.uuid, source_compute=instance.host,
        source_node=instance.node, dest_compute=None, dest_node=None, dest_host=None,
        old_instance_type_id=instance.flavor.id, new_instance_type_id=new_flavor.id,
        status=status, migration_type=migration_type, hidden=False,
        cross_cell_move=False, user_id=instance.user_id, project_id=instance.project_id)
    migration.create()
    return migration


def _request_spec(context: RequestContext, instance: objects.Instance, flavor: objects.Flavor,
                  ignore_hosts: list[str], force_hosts: list[str]) -> objects.RequestSpec:
    """The instance's RequestSpec for this move (not saved: the move's own copy)."""
    try:
        spec = objects.RequestSpec.get_by_instance_uuid(context, instance.uuid)
    except exception.RequestSpecNotFound:
        spec = objects.RequestSpec.from_components(
            context, instance.uuid, None, flavor, 1,
            availability_zone=instance.availability_zone,
            project_id=instance.project_id, user_id=instance.user_id)
    spec.flavor = flavor
    spec.num_instances = 1
    spec.instance_uuid = instance.uuid
    spec.ignore_hosts = ignore_hosts
    spec.force_hosts = force_hosts
    spec.force_nodes = []
    spec.scheduler_hints = {k: v for k, v in (spec.scheduler_hints or {}).items()
                            if k not in ('_nova_check_type',)}
    if spec.obj_attr_is_set('instance_group') and spec.instance_group is not None:
        spec.instance_group = objects.InstanceGroup.get_by_uuid(context,
                                                                spec.instance_group.uuid)
    return spec


def _own_host(instance: objects.Instance) -> list[str]:
    """The host a move leaves, as the scheduler's ignore list."""
    return [instance.host] if instance.host else []


def _fail(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
          migration: objects.Migration, moved: bool, exc: BaseException, event: str,
          vm_state: str | None) -> None:
    """Undo what the conductor did for a move that will not happen."""
    if moved:
        try:
            deps.reportclient.move_allocations(context, migration.uuid, instance.uuid,
                                               target_type='INSTANCE')
        except Exception:
            LOG.exception('Could not give the allocation of migration %s back to %s',
                          migration.uuid, instance.uuid)
    migration.status = 'error'
    migration.save()
    instance_fault.add_instance_fault_from_exc(context, instance, exc, host=CONF.host)
    instance.vm_state = vm_state
    instance.task_state = None
    instance.save()
    message, trace = objects.InstanceActionEvent.format_error(exc)
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                             exc_val=message, exc_tb=trace, host=CONF.host)


def _schedule(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
              migration: objects.Migration, spec: objects.RequestSpec
              ) -> tuple[objects.Selection, list[objects.Selection], bool]:
    """Hand the source allocation to the migration, then select and claim a
    destination for the instance. :returns: (selection, alternates, moved)"""
    moved = deps.reportclient.move_allocations(context, instance.uuid, migration.uuid)
    try:
        host_lists = deps.query_client.select_destinations(
            context, spec, [instance.uuid], return_objects=True, return_alternates=True)
    except Exception as exc:
        raise _Failed(moved, build._scheduling_error(exc)) from exc
    return host_lists[0][0], host_lists[0][1:], moved


class _Failed(Exception):
    def __init__(self, moved: bool, error: BaseException) -> None:
        super().__init__(str(error))
        self.moved = moved
        self.error = error


# -- resize and cold migration -------------------------------------------------------------

def migrate_server(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
                   flavor: objects.Flavor, clean_shutdown: bool, host: str | None) -> None:
    """Schedule the resize (new ``flavor``) or cold migration (same flavor, optionally
    to ``host``) and hand it to the destination.

    :raises NoValidHost: once the move is undone (the caller's API answers 400)
    """
    with nl_context.target_cell(context, cell.of_instance(context, instance.uuid)) as cctxt:
        instance._context = cctxt
        objects.InstanceActionEvent.event_start(cctxt, instance.uuid, MIGRATE_EVENT,
                                                host=CONF.host)
        resize = flavor.id != instance.flavor.id
        migration = _new_migration(cctxt, instance, flavor,
                                   'resize' if resize else 'migration', 'pre-migrating')
        # A cold migration always leaves the host (libvirt cannot migrate to itself);
        # a resize may stay when the operator allows it.
        ignore = [] if resize and CONF.allow_resize_to_same_host else _own_host(instance)
        spec = _request_spec(context, instance, flavor, ignore, [host] if host else [])
        moved = False
        source_zone = instance.availability_zone
        try:
            selection, _alternates, moved = _schedule(deps, cctxt, instance, migration,
                                                      spec)
            migration.dest_compute = selection.service_host
            migration.dest_node = selection.nodename
            migration.save()
            # The server's zone is its host's: the compute's next save writes it.
            instance.availability_zone = selection.availability_zone
            objects.InstanceActionEvent.event_finish(cctxt, instance.uuid, MIGRATE_EVENT,
                                                     host=CONF.host)
            deps.compute_rpcapi.prep_resize(
                cctxt, instance, flavor, migration, host=selection.service_host,
                node=selection.nodename, clean_shutdown=clean_shutdown)
        except Exception as exc:
            failed = exc if not isinstance(exc, _Failed) else exc.error
            moved = exc.moved if isinstance(exc, _Failed) else moved
            instance.availability_zone = source_zone
            LOG.warning('Could not %s %s: %s', 'resize' if resize else 'migrate',
                        instance.uuid, failed)
            _fail(deps, cctxt, instance, migration, moved, failed, MIGRATE_EVENT,
                  instance.vm_state)
            if isinstance(failed, exception.NoValidHost):
                raise failed from None


# -- evacuation --------------------------------------------------------------------------------

def evacuate_instance(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
                      host: str | None, migration: objects.Migration,
                      image: dict[str, Any] | None,
                      admin_password: str | None) -> None:
    """Schedule the server of a dead host elsewhere (or on ``host``) and rebuild it
    there."""
    with nl_context.target_cell(context, cell.of_instance(context, instance.uuid)) as cctxt:
        instance._context = cctxt
        migration._context = cctxt
        objects.InstanceActionEvent.event_start(cctxt, instance.uuid, EVACUATE_EVENT,
                                                host=CONF.host)
        moved = False
        source_zone = instance.availability_zone
        try:
            migration.status = 'pre-migrating'
            migration.save()
            spec = _request_spec(context, instance, instance.flavor, _own_host(instance),
                                 [host] if host else [])
            selection, _alternates, moved = _schedule(deps, cctxt, instance, migration,
                                                      spec)
            migration.dest_compute = selection.service_host
            migration.dest_node = selection.nodename
            migration.save()
            instance.availability_zone = selection.availability_zone
            objects.InstanceActionEvent.event_finish(cctxt, instance.uuid, EVACUATE_EVENT,
                                                     host=CONF.host)
            deps.compute_rpcapi.evacuate_instance(
                cctxt, instance, selection.service_host, selection.nodename, migration,
                image, admin_password)
        except Exception as exc:
            failed = exc if not isinstance(exc, _Failed) else exc.error
            moved = exc.moved if isinstance(exc, _Failed) else moved
            instance.availability_zone = source_zone
            LOG.warning('Could not evacuate %s: %s', instance.uuid, failed)
            # Nova's evacuate that finds no host leaves the server as it was.
            _fail(deps, cctxt, instance, migration, moved, failed, EVACUATE_EVENT,
                  instance.vm_state)

