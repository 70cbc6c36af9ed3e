"""Live migration on the destination host: its pre-check (which asks the source's),
getting ready before the source starts, taking the instance over once its guest runs
here, and removing what it made when the migration fails.

With Neutron's ``binding-extended`` extension the pre-check makes an inactive binding
of each port on this host (the source's stays active while the guest runs there), and
``pre_live_migration`` plugs the VIFs as bound here; the source activates them once
the guest has moved. Without it, the ports are rebound here after the move.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import live_migration, ports, task_states
from novalite.compute import rpcapi as compute_rpcapi
from novalite.compute.operation import recorded
from novalite.network import model

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

CHECK_EVENT = 'compute_check_can_live_migrate_destination'
PRE_EVENT = 'compute_pre_live_migration'
POST_EVENT = 'compute_post_live_migration_at_destination'
ROLLBACK_EVENT = 'compute_rollback_live_migration_at_destination'


def _reason(exc: BaseException) -> str:
    return exc.format_message() if isinstance(exc, exception.NovaliteException) else str(exc)


def check_can_live_migrate_destination(mgr: ComputeManager, context: RequestContext,
                                       instance: objects.Instance,
                                       block_migration: bool | None,
                                       migration: objects.Migration
                                       ) -> objects.LiveMigrateData:
    """The driver's check here, the ports' inactive bindings here, then the source's
    check (an RPC call to it). Nothing is left behind when a check refuses.

    :raises MigrationPreCheckError: this host or the source refuses
    """
    data = objects.LiveMigrateData.new(migration=migration, block_migration=block_migration)
    try:
        with recorded(context, instance.uuid, CHECK_EVENT, mgr.host):
            data = mgr.driver.check_can_live_migrate_destination(context, instance,
                                                                 block_migration, data)
            data.dest_host = data.dest_host or mgr.host
            _bind_here(mgr, context, instance, data)
            try:
                data = compute_rpcapi.ComputeAPI().check_can_live_migrate_source(
                    context, instance, data)
            except Exception:
                _unbind_here(mgr, context, instance, data)
                raise
            if data.block_migration is None:
                data.block_migration = not data.is_shared_instance_path
            return data
    except exception.MigrationPreCheckError:
        raise
    except Exception as exc:
        raise exception.MigrationPreCheckError(
            reason='host %s cannot take the server: %s' % (mgr.host, _reason(exc))) from exc


def _bind_here(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
               data: objects.LiveMigrateData) -> None:
    """Inactive bindings of the server's ports on this host, when Neutron has them."""
    network_info = instance.info_cache.network_info or []
    if network_info and mgr.network_api.supports_port_binding_extension(context):
        data.dest_network_info = mgr.network_api.create_port_bindings(
            context, instance, mgr.host, network_info)
        data.bound_ports = [vif['id'] for vif in network_info]
    else:
        data.dest_network_info = list(network_info)


def _unbind_here(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 data: objects.LiveMigrateData) -> None:
    if not data.bound_ports:
        return
    try:
        mgr.network_api.delete_port_bindings(context, instance, mgr.host, data.bound_ports)
    except Exception:
        LOG.exception('Could not delete the port bindings of %s on %s', instance.uuid,
                      mgr.host)


def pre_live_migration(mgr: ComputeManager, context: RequestContext,
                       instance: objects.Instance,
                       migrate_data: objects.LiveMigrateData) -> objects.LiveMigrateData:
    """Get ready to receive the guest: the driver makes its folder and disks (when not
    shared) and plugs the VIFs as bound here.

    :raises MigrationError: this host cannot get ready (the source rolls back, which
        asks this host to remove what it made)
    """
    network_info: model.NetworkInfo = (migrate_data.dest_network_info
                                       or instance.info_cache.network_info or [])
    try:
        with recorded(context, instance.uuid, PRE_EVENT, mgr.host):
            return mgr.driver.pre_live_migration(context, instance, network_info, None,
                                                 migrate_data)
    except exception.MigrationError:
        raise
    except Exception as exc:
        raise exception.MigrationError(
            reason='host %s could not get ready for the server: %s' % (
                mgr.host, _reason(exc))) from exc


def post_live_migration_at_destination(mgr: ComputeManager, context: RequestContext,
                                       instance: objects.Instance, block_migration: bool,
                                       migrate_data: objects.LiveMigrateData) -> None:
    """The guest runs here: the instance becomes this host's (host, node, zone, the
    network info as bound here, the guest's power state, no task)."""
    migration = migrate_data.migration
    with recorded(context, instance.uuid, POST_EVENT, mgr.host):
        if migrate_data.bound_ports:
            # The source activated the bindings here: read the ports as they are now.
            network_info = mgr.network_api.get_instance_nw_info(
                context, instance, migrate_data.dest_network_info)
        else:
            network_info = ports.move_ports(mgr, context, instance, mgr.host)
        mgr.driver.post_live_migration_at_destination(context, instance, network_info,
                                                      block_migration, None)
        instance.host = mgr.host
        instance.node = (migration.dest_node if migration is not None
                         and migration.dest_node else mgr.host)
        if migrate_data.dest_zone:
            instance.availability_zone = migrate_data.dest_zone
        instance.info_cache.network_info = network_info
        instance.power_state = mgr.driver.get_info(instance).state
        instance.task_state = None
        instance.save(expected_task_state=task_states.MIGRATING)
    live_migration.refresh_resources(mgr, context)
    LOG.info('Instance %s taken over by %s after its live migration', instance.uuid,
             mgr.host)


def rollback_live_migration_at_destination(mgr: ComputeManager, context: RequestContext,
                                           instance: objects.Instance, destroy_disks: bool,
                                           migrate_data: objects.LiveMigrateData) -> None:
    """The migration failed: remove what this host made for the guest (idempotent)."""
    network_info = (migrate_data.dest_network_info
                    or instance.info_cache.network_info or [])
    with recorded(context, instance.uuid, ROLLBACK_EVENT, mgr.host, swallow=True):
        mgr.driver.rollback_live_migration_at_destination(
            context, instance, network_info, None, destroy_disks, migrate_data)
    live_migration.refresh_resources(mgr, context)
