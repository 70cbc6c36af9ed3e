"""Evacuation on the compute hosts: rebuild a server of a dead host here, and clean up
after it on the dead host once that comes back (Nova's ``_destroy_evacuated_instances``).

The conductor moved the server's allocation on the dead host to the migration and
claimed this host for the server. Here the guest is spawned again from the server's
image (its disks stayed on the dead host). When the dead host's compute service starts
again, it destroys the guests it still has of servers evacuated away and deletes the
migration's allocation on it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, objects
from novalite.compute import consoles, ports, task_states, vm_states, volume_moves
from novalite.compute.operation import operation

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

REBUILD_EVENT = 'compute_rebuild_instance'


def rebuild_evacuated(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                      node: str, migration: objects.Migration,
                      image: dict[str, Any] | None,
                      admin_password: str | None) -> None:
    """Spawn the evacuated server here; it keeps being STOPPED if it was."""
    stopped = instance.vm_state == vm_states.STOPPED
    with operation(mgr, context, instance, REBUILD_EVENT, vm_states.ERROR, 'evacuate'):
        try:
            mgr.rt.move_claim(context, instance, instance.flavor, migration, node)
            instance.host = mgr.host
            instance.node = node
            instance.launched_on = mgr.host
            instance.task_state = task_states.REBUILD_SPAWNING
            instance.save(expected_task_state=[task_states.REBUILDING])
            allocations = mgr.reportclient.get_allocations_for_consumer(context,
                                                                        instance.uuid)
            image_meta = objects.ImageMeta.from_dict(image) if image else None
            network_info = ports.move_ports(mgr, context, instance, mgr.host)
            # The dead host's attachments are replaced by this host's (Nova's evacuate).
            bdms = volume_moves.release_host(mgr, context, instance)
            bdi = volume_moves.connect_here(mgr, context, instance, bdms)
            mgr.driver.spawn(context, instance, image_meta, [], admin_password,
                             allocations, network_info=network_info, block_device_info=bdi)
            consoles.clean_tokens(context, instance.uuid)  # they name the dead host
            if stopped:
                mgr.driver.power_off(instance)
            migration.status = 'done'
            migration.save()
            instance.power_state = mgr.driver.get_info(instance).state
            instance.vm_state = vm_states.STOPPED if stopped else vm_states.ACTIVE
            instance.task_state = None
            instance.launched_at = timeutils.utcnow(with_timezone=True)
            instance.save(expected_task_state=[task_states.REBUILD_SPAWNING])
        except Exception:
            _fail(mgr, context, instance, migration)
            raise
    LOG.info('Instance %s evacuated from %s to %s', instance.uuid,
             migration.source_compute, mgr.host)


def _fail(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
          migration: objects.Migration) -> None:
    """The server stays on this host in ERROR (its guest may be half made): the
    allocation here stays with it; the dead host's is freed when it comes back."""
    try:
        mgr.driver.destroy(context, instance)
    except Exception:
        LOG.exception('Could not remove the half-built guest of %s', instance.uuid)
    try:
        migration.status = 'failed'
        migration.save()
    except Exception:
        LOG.exception('Could not mark migration %s failed', migration.uuid)
    instance.host = mgr.host


def destroy_evacuated_instances(mgr: ComputeManager, context: RequestContext) -> list[str]:
    """On start-up: remove the guests and allocations of servers evacuated away from
    this host while it was down. :returns: their uuids"""
    done = []
    for migration in objects.MigrationList.get_evacuations_from_host(context, mgr.host):
        if migration.status != 'done':
            continue  # still being rebuilt elsewhere, or failed: leave it to an operator
        if migration.instance_uuid is None:
            continue  # no instance named, so no guest here to find
        LOG.info('Instance %s was evacuated to %s while this host was down: removing '
                 'its guest and allocation here', migration.instance_uuid,
                 migration.dest_compute)
        try:
            mgr.driver.destroy(context, objects.Instance(uuid=migration.instance_uuid),
                               destroy_disks=True)
        except exception.InstanceNotFound:
            pass
        except Exception:
            LOG.exception('Could not destroy the evacuated guest of %s',
                          migration.instance_uuid)
            continue
        mgr.reportclient.delete_allocation_for_instance(context, migration.uuid)
        migration.status = 'completed'
        migration.save()
        done.append(migration.instance_uuid)
    return done
