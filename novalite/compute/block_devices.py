"""A server's volumes on this compute host: made and connected at build time, let go
when the build fails, detached (and deleted when asked) when the server is deleted.

The attachment API of Cinder, as Nova uses it: the API reserved the user's own volumes
(an attachment without a connector); here the attachment is given this host's connector
(``driver.get_volume_connector``), which makes Cinder answer with the connection info
the driver builds the guest's disk from, and is completed (the volume goes ``in-use``).
Volumes made from an image, a snapshot or nothing are made here first and waited for.
The mappings keep ``attachment_id`` and ``connection_info``, so the guest can be defined
again without asking Cinder, and a failure knows what to undo.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

from oslo_log import log as logging

from novalite import block_device, exception, objects, transient
from novalite.conf import CONF
from novalite.virt.driver import BlockDeviceInfo, ConnectionInfo, VolumeMapping

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

ROOT_DEVICE = '/dev/vda'
# Volumes this host makes for a server (Nova's names: blank ones are named).
BLANK_VOLUME_NAME = '%s-blank-vol'
# A delete's Cinder steps are retried as its other steps are (``compute/delete.py``).
DELETE_RETRIES = 5
DELETE_MAX_PAUSE = 5.0


def volume_mappings(bdms: list[objects.BlockDeviceMapping] | None
                    ) -> list[objects.BlockDeviceMapping]:
    return [bdm for bdm in bdms or [] if bdm.is_volume]


def block_device_info(bdms: list[objects.BlockDeviceMapping] | None) -> BlockDeviceInfo | None:
    """What the driver is told of the instance's volumes (None: it has none), from the
    connection info the mappings keep."""
    volumes = [bdm for bdm in volume_mappings(bdms) if bdm.connection_info]
    if not volumes:
        return None
    return BlockDeviceInfo(
        root_device_name=ROOT_DEVICE, swap=None, ephemerals=[],
        block_device_mapping=[_driver_bdm(bdm) for bdm in volumes])


def _driver_bdm(bdm: objects.BlockDeviceMapping) -> VolumeMapping:
    assert bdm.attachment_id is not None and bdm.volume_id is not None
    return VolumeMapping(
        connection_info=cast('ConnectionInfo', bdm.connection),
        mount_device=bdm.device_name, boot_index=bdm.boot_index, disk_bus=bdm.disk_bus,
        device_type=bdm.device_type or 'disk',
        delete_on_termination=bdm.delete_on_termination,
        attachment_id=bdm.attachment_id, volume_id=bdm.volume_id)


def assign_device_names(bdms: list[objects.BlockDeviceMapping], image_root: bool) -> None:
    """The root volume is ``/dev/vda``; the others take the next free names (after the
    image disk, when the server boots from an image)."""
    used: list[str | None] = [ROOT_DEVICE] if image_root else []
    used += [bdm.device_name for bdm in bdms if bdm.device_name]
    for bdm in sorted(bdms, key=lambda b: (b.boot_index is None, b.boot_index or 0)):
        if bdm.device_name:
            continue
        name = ROOT_DEVICE if bdm.is_root and ROOT_DEVICE not in used else \
            block_device.next_device_name(used)
        bdm.device_name = name
        used.append(name)


def connect_for_spawn(mgr: ComputeManager, context: RequestContext,
                      instance: objects.Instance,
                      bdms: list[objects.BlockDeviceMapping]) -> BlockDeviceInfo | None:
    """Make the volumes the server still lacks, attach every volume to this host and
    complete the attachments; the block device info the driver spawns with.

    Each mapping is saved as soon as it changes, so a failure midway knows what to undo
    (``release_after_failed_build``).

    :raises VolumeNotCreated, CinderConnectionFailed, VolumeError, ...: the build fails
    """
    volumes = volume_mappings(bdms)
    if not volumes:
        return None
    assign_device_names(volumes, image_root=bool(instance.image_ref))
    connector = mgr.driver.get_volume_connector(instance)
    for bdm in volumes:
        if not bdm.volume_id:
            _make_volume(mgr, context, instance, bdm)
        _connect(mgr, context, instance, bdm, connector)
    instance.root_device_name = ROOT_DEVICE
    return block_device_info(volumes)


def _make_volume(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 bdm: objects.BlockDeviceMapping) -> None:
    name = BLANK_VOLUME_NAME % instance.uuid if bdm.source_type == 'blank' else ''
    assert bdm.volume_size, 'the API checked that a volume to make has a size'
    volume = mgr.volume_api.create(
        context, bdm.volume_size, name, '',
        snapshot=bdm.snapshot_id if bdm.source_type == 'snapshot' else None,
        image_id=bdm.image_id if bdm.source_type == 'image' else None,
        volume_type=bdm.volume_type, availability_zone=_volume_zone(instance))
    bdm.volume_id = volume['id']
    _save(bdm)
    LOG.info('Volume %s made for %s from %s %s; waiting until it is available',
             volume['id'], instance.uuid, bdm.source_type,
             bdm.image_id or bdm.snapshot_id or '')
    interval = CONF.block_device_allocate_retries_interval
    mgr.volume_api.wait_for_status(
        context, volume['id'], {'available'},
        timeout=max(CONF.block_device_allocate_retries, 1) * max(interval, 1),
        interval=interval)


def _volume_zone(instance: objects.Instance) -> str | None:
    """As Nova: the volume goes to the server's zone only when volumes may not cross
    zones; else Cinder chooses (its default zone)."""
    return None if CONF.cinder.cross_az_attach else instance.availability_zone


def _connect(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
             bdm: objects.BlockDeviceMapping, connector: dict[str, Any]) -> None:
    assert bdm.volume_id is not None
    if bdm.attachment_id:
        attachment = mgr.volume_api.attachment_update(context, bdm.attachment_id, connector,
                                                      bdm.device_name)
    else:
        attachment = mgr.volume_api.attachment_create(context, bdm.volume_id, instance.uuid,
                                                      connector, bdm.device_name)
        bdm.attachment_id = attachment['id']
        _save(bdm)
    info = dict(attachment.get('connection_info') or {})
    info['serial'] = bdm.volume_id
    bdm.set_connection(info)
    _save(bdm)
    mgr.volume_api.attachment_complete(context, bdm.attachment_id)


def _save(bdm: objects.BlockDeviceMapping) -> None:
    transient.call('Saving the mapping of volume %s' % bdm.volume_id, bdm.save,
                   max_retries=3)


def release_after_failed_build(mgr: ComputeManager, context: RequestContext,
                               instance: objects.Instance,
                               bdms: list[objects.BlockDeviceMapping] | None,
                               keep_reserved: bool = False) -> None:
    """Undo what a failed build did in Cinder: the attachments deleted (the user's
    volumes ``available`` again, for the user), the volumes this build made deleted.
    The mappings stay, ready for the next host to start over. ``keep_reserved`` (the
    build goes to another host): each of the user's volumes keeps a reservation for the
    server instead (a new attachment without a connector, as Nova's shutdown before a
    reschedule), so nobody else takes it meanwhile. Each step that fails is logged; the
    next step still runs."""
    for bdm in volume_mappings(bdms):
        if keep_reserved and bdm.attachment_id and bdm.source_type == 'volume' and \
                bdm.volume_id:
            try:
                old = bdm.attachment_id
                bdm.attachment_id = mgr.volume_api.attachment_create(
                    context, bdm.volume_id, instance.uuid)['id']
                delete_attachment(mgr, context, old)
            except Exception as exc:
                LOG.warning('Could not keep volume %s reserved for %s: %s', bdm.volume_id,
                            instance.uuid, exc)
        elif bdm.attachment_id:
            try:
                mgr.volume_api.attachment_delete(context, bdm.attachment_id)
                bdm.attachment_id = None
            except Exception as exc:
                LOG.warning('Could not delete the attachment %s of volume %s of %s: %s',
                            bdm.attachment_id, bdm.volume_id, instance.uuid, exc)
        bdm.connection_info = None
        if bdm.volume_id and bdm.source_type != 'volume':
            try:
                _delete_volume(mgr, context, bdm.volume_id)
                bdm.volume_id = None
            except Exception as exc:
                LOG.warning('Could not delete volume %s made for %s: %s', bdm.volume_id,
                            instance.uuid, exc)
        try:
            bdm.save()
        except Exception as exc:
            LOG.warning('Could not save the mapping of volume %s of %s: %s', bdm.volume_id,
                        instance.uuid, exc)


def _delete_volume(mgr: ComputeManager, context: RequestContext, volume_id: str) -> None:
    """Delete a volume once it can be (a volume just detached may still be
    ``detaching`` for a moment); a volume already gone is a success."""
    try:
        mgr.volume_api.wait_for_status(context, volume_id,
                                       {'available', 'error', 'error_restoring'},
                                       timeout=30, interval=1)
        mgr.volume_api.delete(context, volume_id)
    except exception.VolumeNotFound:
        pass


def detach_on_delete(mgr: ComputeManager, context: RequestContext,
                     instance: objects.Instance,
                     bdms: list[objects.BlockDeviceMapping] | None) -> None:
    """The server is being deleted (its guest is gone): every attachment deleted, the
    volumes marked ``delete_on_termination`` deleted.

    :raises CinderConnectionFailed: Cinder could not be reached even after retries;
        the delete stays pending and runs again (an attachment or volume already gone
        is a success, so the steps done are not done twice)
    """
    for bdm in volume_mappings(bdms):
        if bdm.attachment_id:
            transient.call('Deleting the attachment %s of volume %s' % (bdm.attachment_id,
                                                                       bdm.volume_id),
                           functools.partial(delete_attachment, mgr, context,
                                             bdm.attachment_id),
                           max_retries=DELETE_RETRIES, max_pause=DELETE_MAX_PAUSE)
        if bdm.delete_on_termination and bdm.volume_id:
            try:
                transient.call('Deleting volume %s of %s' % (bdm.volume_id, instance.uuid),
                               functools.partial(_delete_volume, mgr, context,
                                                 bdm.volume_id),
                               max_retries=DELETE_RETRIES, max_pause=DELETE_MAX_PAUSE)
            except (exception.Invalid, exception.VolumeError,
                    exception.VolumeNotCreated) as exc:
                if isinstance(exc, exception.VolumeError) and \
                        int(str(exc.kwargs.get('status') or 0)) >= 500:
                    raise  # Cinder failed rather than refused: as unreachable
                # As Nova: a volume Cinder will not delete (it has snapshots, say, as
                # the volume of a server imaged with createImage) stays the user's; the
                # server goes all the same.
                LOG.warning('Volume %s of deleted server %s was not deleted: %s',
                            bdm.volume_id, instance.uuid, exc.format_message())


def delete_attachment(mgr: ComputeManager, context: RequestContext,
                      attachment_id: str) -> None:
    """Delete an attachment; one already gone is a success."""
    try:
        mgr.volume_api.attachment_delete(context, attachment_id)
    except exception.VolumeAttachmentNotFound:
        pass
