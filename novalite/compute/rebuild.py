"""Rebuilding an instance on its own host: the guest is destroyed and spawned again.

The API recorded the new image, name, metadata... on the instance and set
``rebuilding``; the conductor checked that the image suits this host. Here the task
moves through ``rebuild_block_device_mapping`` → ``rebuild_spawning`` → None. The
allocation is not touched: the flavor is the same. A rebuild that fails after the
guest was destroyed leaves the instance in ERROR with a fault (there is no guest to go
back to). The volumes stay attached to this host; with ``reimage_boot_volume`` (a
volume-backed server rebuilt at API 2.93) Cinder first writes the image onto the root
volume (``rebuild_volume``). Called with the instance lock held.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import objects
from novalite.compute import (
    block_devices,
    rebuild_volume,
    task_states,
    vm_states,
    volume_moves,
)
from novalite.compute.operation import operation

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

REBUILD_EVENT = 'compute_rebuild_instance'


def rebuild_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                     image: dict, admin_password: str | None, injected_files: list,
                     preserve_ephemeral: bool = False,
                     reimage_boot_volume: bool = False) -> None:
    """:param image: the Glance image to spawn from (the new one, or the same)
    :param preserve_ephemeral: accepted for the API's sake; like Nova's libvirt
        driver, the ephemeral disk is made again all the same
    :param reimage_boot_volume: have Cinder re-image the root volume of a
        volume-backed server with ``image`` before the spawn
    """
    stopped = instance.vm_state == vm_states.STOPPED
    with operation(mgr, context, instance, REBUILD_EVENT, vm_states.ERROR, 'rebuild'):
        instance.task_state = task_states.REBUILD_BLOCK_DEVICE_MAPPING
        instance.save(expected_task_state=[task_states.REBUILDING])
        # Its volumes stay attached to this host across the rebuild.
        bdms = volume_moves.instance_volumes(context, instance)
        bdi = block_devices.block_device_info(bdms)
        mgr.driver.destroy(context, instance, block_device_info=bdi)
        if reimage_boot_volume and not instance.image_ref:
            bdi = rebuild_volume.reimage_root_volume(mgr, context, instance, bdms, image)
        instance.task_state = task_states.REBUILD_SPAWNING
        instance.save(expected_task_state=[task_states.REBUILD_BLOCK_DEVICE_MAPPING])
        allocations = mgr.reportclient.get_allocations_for_consumer(context, instance.uuid)
        mgr.driver.spawn(context, instance, objects.ImageMeta.from_dict(image),
                         injected_files or [], admin_password, allocations,
                         network_info=_network_info(mgr, context, instance),
                         block_device_info=bdi)
        if stopped:
            # Nova keeps a stopped server stopped across its rebuild.
            mgr.driver.power_off(instance)
        instance.power_state = mgr.driver.get_info(instance).state
        instance.vm_state = vm_states.STOPPED if stopped else vm_states.ACTIVE
        instance.task_state = None
        instance.launched_at = timeutils.utcnow(with_timezone=True)
        instance.save(expected_task_state=[task_states.REBUILD_SPAWNING])
        LOG.info('Instance %s rebuilt from image %s', instance.uuid, image.get('id'))


def _network_info(mgr: ComputeManager, context: RequestContext, instance: objects.Instance) -> list:
    """The ports the instance keeps across its rebuild (as last cached)."""
    return list(instance.info_cache.network_info)
