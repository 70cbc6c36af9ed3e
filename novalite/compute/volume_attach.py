"""A volume attached to and detached from a server on its host (os-volume_attachments).

Called by the compute manager with the instance lock held; no task state is set (as in
Nova), so none can be left behind. The API reserved the volume (an attachment without a
connector) after this host chose the device name and made the mapping
(``reserve_block_device_name``). Attach gives the attachment this host's connector,
adds the disk to the guest (``driver.attach_volume``) and completes the attachment;
when the driver cannot, the attachment is deleted and the mapping with it (the volume is
``available`` again). Detach removes the disk from the guest, deletes the attachment
and the mapping; when the guest keeps the disk, Cinder is told the volume is still in
use (``roll_detaching``). Each records its instance-action event and a fault on failure.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_service import loopingcall

from novalite import block_device, exception, executor, objects, transient
from novalite.compute import api_volumes, block_devices
from novalite.compute.interfaces import recorded

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

ATTACH_EVENT = 'compute_attach_volume'
DETACH_EVENT = 'compute_detach_volume'
# A detach's Cinder steps outlast a short outage as a delete's do.
_RETRIES = block_devices.DELETE_RETRIES
# A detach whose guest let the volume go while Cinder was unreachable finishes in the
# background once Cinder answers: it asks again every DETACH_RETRY_INTERVAL seconds for
# up to DETACH_RETRY_SECONDS.
DETACH_RETRY_INTERVAL = 10.0
DETACH_RETRY_SECONDS = 3600.0


def reserve_block_device_name(mgr: ComputeManager, context: RequestContext,
                              instance: objects.Instance, device: str | None,
                              volume_id: str, disk_bus: str | None, device_type: str | None,
                              tag: str | None, delete_on_termination: bool
                              ) -> objects.BlockDeviceMapping:
    """The mapping of a volume about to be attached, with the device it will be (the
    next free one unless ``device`` names one that is free); the API then reserves the
    volume in Cinder for it.

    :raises InvalidBDMFormat: ``device`` is no device name
    :raises InvalidVolume: the volume is attached to the server already (checked again
        here, under the instance's lock, for two attaches racing)
    """
    bdms = list(objects.BlockDeviceMappingList.get_by_instance_uuid(context, instance.uuid))
    if any(bdm.volume_id == volume_id for bdm in bdms):
        raise exception.InvalidVolume(reason='volume %s already attached' % volume_id)
    used = [block_devices.ROOT_DEVICE] if instance.image_ref else []
    used += [bdm.device_name for bdm in bdms if bdm.device_name]
    if device and block_device.prepend_dev(device) not in used:
        block_device.validate_device_name(device)
        name = block_device.prepend_dev(device) or ''
    else:
        # As Nova's libvirt driver: a requested name is a hint; the next free one is used.
        name = block_device.next_device_name(used)
    bdm = objects.BlockDeviceMapping(
        context, instance_uuid=instance.uuid, source_type='volume',
        destination_type='volume', volume_id=volume_id, device_name=name,
        disk_bus=disk_bus, device_type=device_type or 'disk', boot_index=None,
        delete_on_termination=delete_on_termination, tag=tag, no_device=False)
    bdm.create()
    return bdm


def attach_volume(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  bdm: objects.BlockDeviceMapping) -> None:
    with recorded(mgr, context, instance, ATTACH_EVENT, 'volume_attach', reraise=False):
        try:
            _attach(mgr, context, instance, bdm)
        except Exception:
            _undo_attach(mgr, context, instance, bdm)
            raise
    LOG.info('Volume %s attached to %s as %s', bdm.volume_id, instance.uuid,
             bdm.device_name)


def _attach(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
            bdm: objects.BlockDeviceMapping) -> None:
    assert bdm.attachment_id is not None and bdm.volume_id is not None
    connector = mgr.driver.get_volume_connector(instance)
    attachment = mgr.volume_api.attachment_update(context, bdm.attachment_id, connector,
                                                  bdm.device_name)
    info = dict(attachment.get('connection_info') or {})
    info['serial'] = bdm.volume_id
    mgr.driver.attach_volume(context, info, instance, bdm.device_name or '',
                             disk_bus=bdm.disk_bus, device_type=bdm.device_type)
    bdm.set_connection(info)
    try:
        bdm.save()
        mgr.volume_api.attachment_complete(context, bdm.attachment_id)
    except Exception:
        # The guest has the disk: take it out again before the attachment goes.
        try:
            mgr.driver.detach_volume(context, info, instance, bdm.device_name or '')
        except Exception as exc:
            LOG.warning('Could not detach volume %s from %s again: %s', bdm.volume_id,
                        instance.uuid, exc)
        raise


def _undo_attach(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 bdm: objects.BlockDeviceMapping) -> None:
    api_volumes.forget(context, mgr.volume_api, bdm)


def detach_volume(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  volume_id: str, attachment_id: str | None) -> None:
    with recorded(mgr, context, instance, DETACH_EVENT, 'volume_detach', reraise=False):
        try:
            bdm = objects.BlockDeviceMapping.get_by_volume_and_instance(context, volume_id,
                                                                        instance.uuid)
        except exception.VolumeBDMNotFound:
            LOG.info('Volume %s is not attached to %s (detached already)', volume_id,
                     instance.uuid)
            return
        _detach(mgr, context, instance, bdm)
    LOG.info('Volume %s detached from %s', volume_id, instance.uuid)


def _detach(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
            bdm: objects.BlockDeviceMapping) -> None:
    assert bdm.volume_id is not None
    info = bdm.connection
    if info is not None:
        try:
            mgr.driver.detach_volume(context, info, instance, bdm.device_name or '')
        except Exception:
            # The guest still has it: so does the server, and Cinder says so again.
            try:
                mgr.volume_api.roll_detaching(context, bdm.volume_id)
            except Exception as exc:
                LOG.warning('Could not tell Cinder that volume %s is still in use: %s',
                            bdm.volume_id, exc)
            raise
        # The guest has let it go: a definition made from now on leaves it out.
        bdm.connection_info = None
        bdm.save()
    if bdm.attachment_id:
        attachment_id = bdm.attachment_id
        try:
            transient.call('Deleting the attachment %s of volume %s' % (attachment_id,
                                                                       bdm.volume_id),
                           lambda: block_devices.delete_attachment(mgr, context,
                                                                   attachment_id),
                           max_retries=_RETRIES, max_pause=block_devices.DELETE_MAX_PAUSE)
        except (exception.CinderConnectionFailed, exception.VolumeError) as exc:
            if isinstance(exc, exception.VolumeError) and \
                    int(str(exc.kwargs.get('status') or 0)) < 500:
                raise
            executor.spawn(_finish_detach_later, mgr, context, instance, bdm)
            raise exception.VolumeDetachFailed(
                volume_id=bdm.volume_id,
                reason='the guest let it go, but the volume service (Cinder) did not '
                       'answer; the detach finishes once it does (%s)'
                       % exc.format_message()) from exc
    bdm.destroy()


def _finish_detach_later(mgr: ComputeManager, context: RequestContext,
                         instance: objects.Instance, bdm: objects.BlockDeviceMapping) -> None:
    """Delete the attachment of a volume the guest already let go, once Cinder
    answers; then the mapping. Given up (logged) after DETACH_RETRY_SECONDS."""
    assert bdm.attachment_id is not None
    attachment_id = bdm.attachment_id
    deadline = time.monotonic() + DETACH_RETRY_SECONDS

    def attempt() -> None:
        try:
            block_devices.delete_attachment(mgr, context, attachment_id)
        except (exception.CinderConnectionFailed, exception.VolumeError) as exc:
            if time.monotonic() > deadline:
                LOG.error('Gave up the detach of volume %s from %s: Cinder did not answer '
                          'for %d s (%s)', bdm.volume_id, instance.uuid,
                          DETACH_RETRY_SECONDS, exc)
                raise loopingcall.LoopingCallDone(False) from exc
            return
        raise loopingcall.LoopingCallDone(True)

    timer = loopingcall.FixedIntervalLoopingCall(attempt)
    if timer.start(interval=DETACH_RETRY_INTERVAL, initial_delay=DETACH_RETRY_INTERVAL
                   ).wait():
        with mgr.instance_lock(instance.uuid):
            bdm.destroy()
        LOG.info('Volume %s detached from %s now that Cinder answers', bdm.volume_id,
                 instance.uuid)

