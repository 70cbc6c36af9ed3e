"""Rebuilding a volume-backed server with its root volume re-imaged (API 2.93).

Cinder writes the image onto the root volume (``os-reimage``, volume API 3.68) while the
volume stays reserved for the server, as Nova's ``_rebuild_volume_backed_instance``:

1. a new attachment without a connector is made for the root volume first, the mapping
   saved with it, then the old attachment (this host's connection) deleted: the volume
   goes ``reserved``, never ``available`` for another server to take;
2. Cinder is asked to re-image it with ``reimage_reserved`` and this host waits for
   Cinder's ``volume-reimaged`` event (through the API's os-server-external-events), at
   most ``[DEFAULT] reimage_timeout_per_gb`` seconds per GiB of the image;
3. the new attachment gets this host's connector and is completed, as at a boot.

The guest was destroyed before. Any failure raises ``BuildAbortException`` saying what
Cinder did or did not do; the rebuild's frame puts the server in ERROR with it as the
fault. The mapping always names the attachment Cinder holds for the server, so a later
delete of the server lets go of the volume: nothing leaks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects, transient
from novalite.compute import block_devices, instance_events
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext
    from novalite.virt.driver import BlockDeviceInfo

LOG = logging.getLogger(__name__)

EVENT = 'volume-reimaged'
# Nova's words for every failure of this flow; the cause follows.
FAILED = 'Failed to rebuild volume backed instance.'
GIB = 1 << 30


def reimage_root_volume(mgr: ComputeManager, context: RequestContext,
                        instance: objects.Instance, bdms: list[objects.BlockDeviceMapping],
                        image: dict) -> BlockDeviceInfo | None:
    """Re-image the server's root volume with ``image`` and connect it to this host
    again; the block device info of all its volumes, to spawn with.

    :param bdms: the server's volume mappings (the root one is updated in place)
    :raises BuildAbortException: the root volume could not be re-imaged or connected
    """
    root = next((bdm for bdm in bdms if bdm.is_root and bdm.volume_id), None)
    if root is None:
        raise exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='Unable to find root block device mapping for volume-backed instance.')
    _reserve_anew(mgr, context, instance, root)
    _reimage(mgr, context, instance, root, image)
    try:
        block_devices.connect_for_spawn(mgr, context, instance, [root])
    except exception.NovaliteException as exc:
        raise _abort(instance, 'Cinder could not connect the re-imaged volume %s to this '
                               'host: %s' % (root.volume_id, exc.format_message())) from exc
    LOG.info('Root volume %s of %s re-imaged with image %s', root.volume_id, instance.uuid,
             image.get('id'))
    return block_devices.block_device_info(bdms)


def _abort(instance: objects.Instance, cause: str) -> exception.BuildAbortException:
    return exception.BuildAbortException(instance_uuid=instance.uuid,
                                         reason='%s %s' % (FAILED, cause))


def _reserve_anew(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                  root: objects.BlockDeviceMapping) -> None:
    """The root mapping on a new attachment with no connector, the old one deleted."""
    assert root.volume_id is not None
    old = root.attachment_id
    try:
        new = mgr.volume_api.attachment_create(context, root.volume_id, instance.uuid)['id']
    except exception.NovaliteException as exc:
        raise _abort(instance, 'Cinder refused a new attachment of volume %s: %s' % (
            root.volume_id, exc.format_message())) from exc
    root.attachment_id = new
    root.connection_info = None
    try:
        transient.call('Saving the mapping of volume %s' % root.volume_id, root.save,
                       max_retries=3)
    except Exception as exc:
        # The server is gone (or its mapping): the new attachment is nobody's.
        block_devices.delete_attachment(mgr, context, new)
        raise _abort(instance, 'Its root volume mapping could not be saved: %s' % exc) \
            from exc
    if not old:
        return
    try:
        block_devices.delete_attachment(mgr, context, old)
    except exception.NovaliteException as exc:
        raise _abort(instance, 'Cinder did not delete the attachment %s of volume %s: %s'
                     % (old, root.volume_id, exc.format_message())) from exc


def reimage_timeout(image: dict) -> int:
    """Seconds to wait for Cinder's event: ``reimage_timeout_per_gb`` per GiB of the
    image (at least one)."""
    size_gb = max(1, -(-int(image.get('size') or 0) // GIB))
    return int(CONF.reimage_timeout_per_gb * size_gb)


def _reimage(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
             root: objects.BlockDeviceMapping, image: dict) -> None:
    """Cinder's ``os-reimage`` of the reserved root volume, and its event awaited."""
    assert root.volume_id is not None
    timeout = reimage_timeout(image)
    with mgr.instance_events.expecting(instance.uuid, (EVENT, root.volume_id)) as waiter:
        try:
            mgr.volume_api.reimage_volume(context, root.volume_id, image['id'],
                                          reimage_reserved=True)
        except exception.NovaliteException as exc:
            raise _abort(instance, 'Cinder refused to re-image volume %s with image %s: %s'
                         % (root.volume_id, image['id'], exc.format_message())) from exc
        status = waiter.wait(timeout)
    if status == 'cancelled':
        raise instance_events.WaitCancelled(instance_uuid=instance.uuid)
    if status is None:
        raise _abort(instance, 'Cinder did not report volume %s re-imaged with image %s '
                               'within %d s (event %s).' % (root.volume_id, image['id'],
                                                            timeout, EVENT))
    if status != 'completed':
        LOG.error('Cinder reported failure during reimaging with %s for instance %s',
                  EVENT, instance.uuid)
        raise _abort(instance, 'Cinder reported failure during reimaging of volume %s '
                               '(event %s: %s).' % (root.volume_id, EVENT, status))
