"""A server's volumes following it from host to host: resize and cold migration, their
revert, shelve offload and unshelve, evacuation.

As Nova: the host the server leaves replaces each attachment with a new one that has no
connector (the volume stays reserved for the server, ``release_host``); the host it
arrives on gives those attachments its connector and completes them
(``block_devices.connect_for_spawn``), which makes the attachment's host in Cinder
follow the server. Reading the mappings is a round trip to the conductor, made only by
these moves, and only a server with volumes pays the Cinder calls.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects, transient
from novalite.compute import block_devices
from novalite.virt.driver import BlockDeviceInfo

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def instance_volumes(context: RequestContext, instance: objects.Instance
                     ) -> list[objects.BlockDeviceMapping]:
    """The instance's volume mappings, read from its cell."""
    return block_devices.volume_mappings(list(
        objects.BlockDeviceMappingList.get_by_instance_uuid(context, instance.uuid)))


def release_host(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 bdms: list[objects.BlockDeviceMapping] | None = None
                 ) -> list[objects.BlockDeviceMapping]:
    """The server leaves this host but keeps its volumes: each attachment replaced by a
    new one without a connector (Nova's ``_terminate_volume_connections``).

    :returns: the mappings, with their new attachments
    """
    if bdms is None:
        bdms = instance_volumes(context, instance)
    for bdm in bdms:
        new, stale = _reserve_again(mgr, context, instance, bdm)
        bdm.attachment_id = new
        bdm.connection_info = None
        transient.call('Saving the mapping of volume %s' % bdm.volume_id, bdm.save,
                       max_retries=3)
        if stale:
            block_devices.delete_attachment(mgr, context, stale)
        LOG.info('Volume %s of %s released from %s (attachment %s)', bdm.volume_id,
                 instance.uuid, mgr.host, bdm.attachment_id)
    return bdms


def _reserve_again(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                   bdm: objects.BlockDeviceMapping) -> tuple[str, str | None]:
    """A new attachment without a connector for the mapping's volume.

    Cinder gives a second attachment to the server holding the volume only while the
    volume is ``reserved`` or ``in-use``: one a failed connect left ``attaching`` is let
    go first (``available`` for a moment), then reserved again.

    :returns: the new attachment, and the old one still to delete (if any)
    """
    assert bdm.volume_id is not None
    old = bdm.attachment_id
    try:
        return mgr.volume_api.attachment_create(context, bdm.volume_id,
                                                instance.uuid)['id'], old
    except exception.InvalidVolume:
        if not old:
            raise
    LOG.info('Volume %s of %s takes no second attachment now: attachment %s deleted '
             'before the volume is reserved again', bdm.volume_id, instance.uuid, old)
    block_devices.delete_attachment(mgr, context, old)
    return mgr.volume_api.attachment_create(context, bdm.volume_id, instance.uuid)['id'], None


def connect_here(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 bdms: list[objects.BlockDeviceMapping] | None = None
                 ) -> BlockDeviceInfo | None:
    """The server's volumes connected to this host (what ``release_host`` left
    reserved elsewhere); the block device info to define its guest with."""
    if bdms is None:
        bdms = instance_volumes(context, instance)
    return block_devices.connect_for_spawn(mgr, context, instance, bdms)
