"""Snapshots of a libvirt guest's root disk, uploaded to Glance."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import objects
from novalite.compute import power_state, task_states
from novalite.context import RequestContext
from novalite.virt import driver

if TYPE_CHECKING:
    from novalite.virt.libvirt.driver import LibvirtDriver

LOG = logging.getLogger(__name__)


def snapshot(drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
             image_id: str, update_task_state: driver.UpdateTaskState) -> None:
    """Copy the root disk with ``qemu-img convert`` (flattened, in the disk's own format)
    and upload it as the data of Glance image ``image_id``.

    A running guest is paused while its disk is read, so the copy is consistent, and
    resumed afterwards; a stopped one is read as it is.
    """
    guest = drv.host.get_guest(instance.uuid)
    root = drv._root_disk(drv.instance_dir(instance))
    update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
    snapshot_dir = os.path.join(drv.instances_path, 'snapshots')
    os.makedirs(snapshot_dir, exist_ok=True)
    out_path = os.path.join(snapshot_dir, image_id)
    paused = guest.get_power_state() == power_state.RUNNING
    try:
        if paused:
            guest.pause()
        try:
            disk = drv.image_backend.snapshot_disk(root, out_path,
                                                   force_share=guest.is_active())
        finally:
            if paused:
                guest.resume()
        update_task_state(task_state=task_states.IMAGE_UPLOADING,
                          expected_state=task_states.IMAGE_PENDING_UPLOAD)
        image_api = drv.image_cache.image_api
        image_api.update(context, image_id, {'disk_format': disk.format,
                                             'container_format': 'bare'})
        image_api.upload(context, image_id, disk.path)
    finally:
        if os.path.exists(out_path):
            os.unlink(out_path)
    LOG.info('Snapshot %s of instance %s uploaded', image_id, instance.uuid)
