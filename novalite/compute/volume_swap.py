"""Swapping a server's volume for another on its host (os-volume_attachments PUT with a
new volumeId: Cinder's, when it migrates or retypes an attached volume; the API refuses
a volume whose migration status is not set, as Nova 34).

Called by the compute manager with the instance lock held; no task state is set (as in
Nova), so the server stays as it was whatever happens. The API has marked the old
volume ``detaching`` and reserved the new one for the server (``new_attachment_id``).
Here the new attachment gets this host's connector, the driver copies the guest's disk
to the new volume and switches the guest to it (``driver.swap_volume``), and the new
attachment is completed. Then the old attachment is deleted (the old volume is
``available``), Cinder is told its migration is over when it started one
(``migrate_volume_completion``: it answers which volume id the server keeps), and the
mapping is moved to the new volume, keeping its device, tag, boot index and
``delete_on_termination``.

A failure before the guest is switched deletes the new attachment and tells Cinder the
old volume is in use again; the event is recorded as failed with a fault, as Nova's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import exception, objects, transient
from novalite.compute import block_devices
from novalite.compute.interfaces import recorded

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext
    from novalite.virt import driver

LOG = logging.getLogger(__name__)

EVENT = 'compute_swap_volume'
# The old volume's migration_status while Cinder migrates (or retypes) it: the swap is
# then Cinder's, and it must be told when the swap is over.
CINDER_MIGRATION = ('migrating', 'retyping')


def swap_volume(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                old_volume_id: str, new_volume_id: str, new_attachment_id: str) -> None:
    with recorded(mgr, context, instance, EVENT, 'volume_swap', reraise=False):
        _swap(mgr, context, instance, old_volume_id, new_volume_id, new_attachment_id)
    LOG.info('Volume %s of %s swapped for %s', old_volume_id, instance.uuid, new_volume_id)


def _swap(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
          old_volume_id: str, new_volume_id: str, new_attachment_id: str) -> None:
    try:
        bdm = objects.BlockDeviceMapping.get_by_volume_and_instance(context, old_volume_id,
                                                                    instance.uuid)
        old_volume = mgr.volume_api.get(context, old_volume_id)
        new_volume = mgr.volume_api.get(context, new_volume_id)
    except Exception:
        _undo(mgr, context, old_volume_id, new_volume_id, new_attachment_id, False)
        raise
    by_cinder = old_volume.get('migration_status') in CINDER_MIGRATION
    old_size, new_size = int(old_volume.get('size') or 0), int(new_volume.get('size') or 0)
    resize_to = new_size if new_size > old_size else 0
    mountpoint = bdm.device_name or ''
    LOG.info('Swapping volume %s at %s of %s for %s%s', old_volume_id, mountpoint,
             instance.uuid, new_volume_id, ' (Cinder migrates it)' if by_cinder else '')
    new_info = _switch(mgr, context, instance, bdm, old_volume_id, new_volume,
                       new_attachment_id, resize_to, by_cinder)
    _delete_old_attachment(mgr, context, bdm)
    save_volume_id = new_volume_id
    failure: Exception | None = None
    if by_cinder:
        # Cinder gives the new volume the old one's id (its migration keeps the id):
        # the mapping keeps that one.
        try:
            save_volume_id = mgr.volume_api.migrate_volume_completion(
                context, old_volume_id, new_volume_id)['save_volume_id']
        except Exception as exc:
            # The guest is on the new volume whatever Cinder says: so is the mapping.
            LOG.error('Cinder did not take the end of the migration of volume %s: %s',
                      old_volume_id, exc)
            failure = exc
    _move_mapping(bdm, new_info, save_volume_id, new_attachment_id, resize_to)
    if failure is not None:
        raise failure


def _switch(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
            bdm: objects.BlockDeviceMapping, old_volume_id: str, new_volume: dict[str, Any],
            new_attachment_id: str, resize_to: int, by_cinder: bool
            ) -> driver.ConnectionInfo:
    """Connect the new volume, have the guest switched to it, complete its attachment;
    on a failure, undo (the guest switched back if it was switched)."""
    new_volume_id = new_volume['id']
    mountpoint = bdm.device_name or ''
    switched = False
    old_info: driver.ConnectionInfo = {}
    new_info: driver.ConnectionInfo = {}
    try:
        if new_volume.get('multiattach') and \
                not mgr.driver.capabilities.get('supports_multiattach'):
            raise exception.VolumeAttachFailed(
                volume_id=new_volume_id,
                reason='the hypervisor driver does not support multiattach volumes')
        old_info = bdm.connection or {}
        if not old_info:
            raise exception.VolumeBDMPathNotFound(path=mountpoint)
        old_info.setdefault('serial', old_volume_id)
        connector = mgr.driver.get_volume_connector(instance)
        new_info = dict(mgr.volume_api.attachment_update(
            context, new_attachment_id, connector, mountpoint).get('connection_info') or {})
        new_info.setdefault('serial', new_volume_id)
        mgr.driver.swap_volume(context, old_info, new_info, instance, mountpoint, resize_to)
        switched = True
        mgr.volume_api.attachment_complete(context, new_attachment_id)
    except Exception as exc:
        LOG.error('Failed to swap volume %s of %s for %s: %s', old_volume_id,
                  instance.uuid, new_volume_id, exc)
        if switched:
            _switch_back(mgr, context, instance, new_info, old_info, mountpoint)
        _undo(mgr, context, old_volume_id, new_volume_id, new_attachment_id, by_cinder)
        raise
    return new_info


def _switch_back(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 new_info: driver.ConnectionInfo, old_info: driver.ConnectionInfo,
                 mountpoint: str) -> None:
    """The guest was switched but Cinder did not complete the new attachment: back to
    the old volume, which the server keeps."""
    try:
        mgr.driver.swap_volume(context, new_info, old_info, instance, mountpoint, 0)
    except Exception as exc:
        LOG.error('Could not switch %s back to volume %s at %s: %s', instance.uuid,
                  old_info.get('serial'), mountpoint, exc)


def _undo(mgr: ComputeManager, context: RequestContext, old_volume_id: str,
          new_volume_id: str, new_attachment_id: str, by_cinder: bool) -> None:
    """The server keeps the old volume: in use again in Cinder, the new one's
    attachment deleted, and Cinder's migration told it failed; what cannot be done
    now is logged."""
    steps: list[tuple[str, Any]] = [
        ('tell Cinder that volume %s is in use again' % old_volume_id,
         lambda: mgr.volume_api.roll_detaching(context, old_volume_id)),
        ('delete the attachment %s of volume %s' % (new_attachment_id, new_volume_id),
         lambda: block_devices.delete_attachment(mgr, context, new_attachment_id))]
    if by_cinder:
        steps.append(('tell Cinder that the migration of volume %s failed' % old_volume_id,
                      lambda: mgr.volume_api.migrate_volume_completion(
                          context, old_volume_id, new_volume_id, error=True)))
    for what, step in steps:
        try:
            step()
        except Exception as exc:
            LOG.warning('Could not %s: %s', what, exc)


def _delete_old_attachment(mgr: ComputeManager, context: RequestContext,
                           bdm: objects.BlockDeviceMapping) -> None:
    """The guest uses the new volume: the old one is let go (``available``). Tried
    again through a short Cinder outage; past that the swap stands and the left-over
    attachment is logged (the old volume stays ``detaching``)."""
    attachment_id = bdm.attachment_id
    if not attachment_id:
        return
    try:
        transient.call('Deleting the attachment %s of volume %s' % (attachment_id,
                                                                   bdm.volume_id),
                       lambda: block_devices.delete_attachment(mgr, context, attachment_id),
                       max_retries=block_devices.DELETE_RETRIES,
                       max_pause=block_devices.DELETE_MAX_PAUSE)
    except Exception as exc:
        LOG.error('Volume %s was swapped out, but its attachment %s could not be '
                  'deleted: %s', bdm.volume_id, attachment_id, exc)


def _move_mapping(bdm: objects.BlockDeviceMapping, new_info: driver.ConnectionInfo,
                  save_volume_id: str, new_attachment_id: str, resize_to: int) -> None:
    """Nova's update of the mapping after a swap: the volume (the id Cinder says the
    server keeps), its attachment and connection; device, tag, boot index and
    ``delete_on_termination`` stay."""
    info = dict(new_info, serial=save_volume_id, volume_id=save_volume_id)
    if isinstance(info.get('data'), dict):
        info['data'] = dict(info['data'], volume_id=save_volume_id)
    bdm.set_connection(info)
    bdm.source_type = 'volume'
    bdm.destination_type = 'volume'
    bdm.snapshot_id = None
    bdm.no_device = False
    bdm.volume_id = save_volume_id
    bdm.attachment_id = new_attachment_id
    if resize_to:
        bdm.volume_size = resize_to
    bdm.save()
