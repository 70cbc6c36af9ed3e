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

A detach whose guest let the volume go while Cinder could not delete the attachment
(unreachable, 5xx) finishes in the background once Cinder answers; the mapping is
marked (``DETACHED``) before the attachment is deleted, so a compute that stops first
finishes it when it starts again (``resume_detaches``).
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, NoReturn

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
# The mark of a mapping whose guest let the volume go, its attachment not deleted yet:
# connection_info '' (empty; NULL is "not connected"). Readers cannot tell it from NULL
# (``bdm.connection`` is None, a guest definition leaves the volume out), no migration
# is needed, and it outlives this process, unlike the loop that finishes the detach.
DETACHED = ''

# Mapping uuid -> (host, the loop finishing its detach): one loop a mapping; a host's
# stop ends its loops (the mark remains for its next start).
_finishing: dict[str, tuple[str, loopingcall.FixedIntervalLoopingCall]] = {}
_finishing_lock = threading.Lock()


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
    if bdm.connection_info != DETACHED:
        # The guest has let it go (or never had it): a definition made from now on
        # leaves it out, and a restart before the attachment is gone finishes the detach.
        bdm.connection_info = DETACHED
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
            if not _cinder_down(exc):
                raise
            _finish_detach_later(mgr, context, instance, bdm, DETACH_RETRY_INTERVAL)
            raise exception.VolumeDetachFailed(
                volume_id=bdm.volume_id,
                reason='the guest let it go, but the volume service (Cinder) did not '
                       'answer; the detach finishes once it does (%s)'
                       % exc.format_message()) from exc
    bdm.destroy()


def _cinder_down(exc: exception.CinderConnectionFailed | exception.VolumeError) -> bool:
    """Cinder was unreachable or failed (5xx), rather than refused."""
    return not isinstance(exc, exception.VolumeError) or \
        int(str(exc.kwargs.get('status') or 0)) >= 500


def resume_detaches(mgr: ComputeManager, context: RequestContext) -> None:
    """On start-up: finish the detaches this host left with the attachment still in
    Cinder (the guest let the volume go; Cinder did not answer before the service
    stopped). Each is tried at once, then as a detach that met an outage."""
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        try:
            bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(context,
                                                                       instance.uuid)
        except Exception:
            # The others are resumed all the same; this one at the next start.
            LOG.exception('Could not read the volume mappings of %s', instance.uuid)
            continue
        for bdm in bdms:
            if bdm.is_volume and bdm.attachment_id and bdm.connection_info == DETACHED:
                LOG.info('Finishing the detach of volume %s from %s', bdm.volume_id,
                         instance.uuid)
                _finish_detach_later(mgr, context, instance, bdm, 0)


def stop_detaches(mgr: ComputeManager) -> None:
    """On a stop: end this host's loops finishing detaches rather than hold the stop
    (their mappings keep the mark: the next start resumes them)."""
    with _finishing_lock:
        mine = [uuid for uuid, (host, _timer) in _finishing.items() if host == mgr.host]
        timers = [_finishing.pop(uuid)[1] for uuid in mine]
    for timer in timers:
        timer.stop()
    for timer in timers:
        # An attempt under way ends first (at most one Cinder call).
        timer.wait()


def _finish_detach_later(mgr: ComputeManager, context: RequestContext,
                         instance: objects.Instance, bdm: objects.BlockDeviceMapping,
                         initial_delay: float) -> None:
    """Delete the attachment of a volume the guest already let go, once Cinder
    answers; then the mapping. Asked every DETACH_RETRY_INTERVAL seconds (the first
    time after ``initial_delay``) on a looping call's thread; given up (logged) after
    DETACH_RETRY_SECONDS or when Cinder refuses."""
    assert bdm.attachment_id is not None
    attachment_id = bdm.attachment_id
    deadline = time.monotonic() + DETACH_RETRY_SECONDS

    def attempt() -> None:
        try:
            block_devices.delete_attachment(mgr, context, attachment_id)
        except (exception.CinderConnectionFailed, exception.VolumeError) as exc:
            if _cinder_down(exc) and time.monotonic() <= deadline:
                return
            LOG.error('Gave up the detach of volume %s from %s (its next start tries '
                      'again): %s', bdm.volume_id, instance.uuid, exc)
            _done(False)
        try:
            with mgr.instance_lock(instance.uuid):
                bdm.destroy()
        except Exception as exc:
            # The attachment is gone: the next attempt finds it so and tries this again.
            LOG.warning('Could not delete the mapping of volume %s: %s', bdm.volume_id,
                        exc)
            return
        LOG.info('Volume %s detached from %s now that Cinder answers', bdm.volume_id,
                 instance.uuid)
        _done(True)

    def _done(detached: bool) -> NoReturn:
        with _finishing_lock:
            _finishing.pop(bdm.uuid, None)
        raise loopingcall.LoopingCallDone(detached)

    timer = loopingcall.FixedIntervalLoopingCall(executor.carrying(attempt))
    with _finishing_lock:
        if bdm.uuid in _finishing:
            return  # a loop of this process finishes it already
        _finishing[bdm.uuid] = (mgr.host, timer)
    timer.start(interval=DETACH_RETRY_INTERVAL, initial_delay=initial_delay)
