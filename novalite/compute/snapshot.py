"""Snapshots of an instance on this host: createImage and createBackup.

The API created the Glance image (queued) and set ``image_snapshot_pending`` (or
``image_backup``); here the task moves through ``image_snapshot`` →
``image_pending_upload`` → ``image_uploading`` → None while the driver captures the
root disk and uploads it. A snapshot that fails deletes its image: no queued image is
left behind. Called with the instance lock held, inside ``operation.operation``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception
from novalite.compute import task_states
from novalite.compute.operation import operation
from novalite.image import glance

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

SNAPSHOT_EVENT = 'compute_snapshot_instance'
BACKUP_EVENT = 'compute_backup_instance'


def task_state_updater(instance: objects.Instance, names: dict[str, str] | None = None
                       ) -> Callable[..., None]:
    """The ``update_task_state`` callback the driver's ``snapshot`` calls.

    :param names: renames the driver's ``image_*`` states (shelving has its own).
    """
    names = names or {}

    def update(task_state: str, expected_state: str | None = None) -> None:
        expected = names.get(expected_state or '', expected_state) \
            if expected_state is not None else instance.task_state
        instance.task_state = names.get(task_state, task_state)
        instance.save(expected_task_state=expected)
    return update


def image_api(mgr: ComputeManager) -> glance.API:
    """The Glance client of the manager (a test may give it one), else a new one."""
    return getattr(mgr, 'image_api', None) or glance.API()


def delete_image_quietly(mgr: ComputeManager, context: RequestContext, image_id: str) -> None:
    """Delete an image a failed snapshot leaves queued (or half uploaded)."""
    try:
        image_api(mgr).delete(context, image_id)
    except exception.ImageNotFound:
        pass
    except Exception:
        LOG.exception('Could not delete image %s of a failed snapshot', image_id)


def capture(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, image_id: str,
            names: dict[str, str] | None = None) -> None:
    """The driver's snapshot, deleting the image if it fails."""
    try:
        mgr.driver.snapshot(context, instance, image_id, task_state_updater(instance, names))
    except Exception:
        delete_image_quietly(mgr, context, image_id)
        raise


def snapshot_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                      image_id: str) -> None:
    """createImage: the root disk as Glance image ``image_id``; the instance keeps its
    vm_state."""
    with operation(mgr, context, instance, SNAPSHOT_EVENT, instance.vm_state, 'snapshot'):
        _snapshot(mgr, context, instance, image_id, task_states.IMAGE_SNAPSHOT_PENDING)
        LOG.info('Instance %s snapshotted to image %s', instance.uuid, image_id)


def backup_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    image_id: str, backup_type: str, rotation: int) -> None:
    """createBackup: a snapshot, then only the ``rotation`` newest backups of this
    ``backup_type`` are kept."""
    with operation(mgr, context, instance, BACKUP_EVENT, instance.vm_state, 'snapshot'):
        _snapshot(mgr, context, instance, image_id, task_states.IMAGE_BACKUP)
        rotate_backups(mgr, context, instance, backup_type, rotation)


def _snapshot(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
              image_id: str, expected: str) -> None:
    try:
        instance.task_state = task_states.IMAGE_SNAPSHOT
        instance.save(expected_task_state=expected)
    except Exception:
        delete_image_quietly(mgr, context, image_id)
        raise
    capture(mgr, context, instance, image_id)
    instance.task_state = None
    instance.save(expected_task_state=task_states.IMAGE_UPLOADING)


def rotate_backups(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                   backup_type: str, rotation: int) -> None:
    """Delete this instance's backups of ``backup_type`` beyond the newest
    ``rotation`` (0 deletes them all, the new one included, as Nova does)."""
    backups = image_api(mgr).get_all(
        context, filters={'instance_uuid': instance.uuid, 'image_type': 'backup',
                          'backup_type': backup_type}, sort='created_at:desc')
    for image in backups[rotation:]:
        LOG.info('Rotating out backup %s of instance %s', image['id'], instance.uuid)
        try:
            image_api(mgr).delete(context, image['id'])
        except exception.ImageNotFound:
            pass
