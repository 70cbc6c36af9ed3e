"""The compute API of a server's volumes (os-volume_attachments): the checks Nova makes,
then the server's host does the work (``compute/volume_attach.py``).

Attach: the host chooses the device and makes the mapping (a call, under the
instance's lock), then the volume is reserved in Cinder for it (an attachment without a
connector: Cinder refuses a volume that is not ``available``), then the host is told to
attach it. A server that is shelved offloaded has no host: its mapping is made and the
volume reserved here, and the host it is unshelved on attaches it.
Detach: Cinder is told the volume is ``detaching`` (it refuses a volume not in use),
then the host detaches it; a shelved-offloaded server's volume is let go here.
Swap (Cinder's, for a migration or retype of an attached volume: the API refuses a
volume Cinder is not migrating, as Nova 34): the old volume ``detaching`` (Cinder lets
it be while it migrates), the new one reserved for the server, then the host copies
the disk over, switches the guest to it and tells Cinder the migration is over.

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import api_volumes, instance_actions, instance_edit, vm_states
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

LOG = logging.getLogger(__name__)

# Nova's check_instance_state of attach_volume and detach_volume.
ATTACH_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.STOPPED, vm_states.RESIZED,
                 vm_states.SOFT_DELETED, vm_states.SHELVED, vm_states.SHELVED_OFFLOADED)
DETACH_STATES = ATTACH_STATES + (vm_states.SUSPENDED,)
# Nova's check_instance_state of swap_volume: a guest the host can copy the disk of.
SWAP_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.RESIZED)
MULTIATTACH_SWAP = ('Swapping multi-attach volumes with more than one read/write '
                    'attachment is not supported.')


def get_volume_mappings(api: API, context: RequestContext,
                        instance: objects.Instance) -> list[objects.BlockDeviceMapping]:
    """The server's volumes (none while it is being scheduled). A mapping whose volume
    was not made (the build failed first, or deleted what it made) has no volume in
    Cinder: left out, as Nova's list does."""
    return instance_edit.in_cell(
        context, instance.uuid, [], lambda cctxt: [
            bdm for bdm in objects.BlockDeviceMappingList.get_by_instance_uuid(
                cctxt, instance.uuid) if bdm.is_volume and bdm.volume_id])


def attach_volume(api: API, context: RequestContext, instance: objects.Instance,
                  volume_id: str, device: str | None = None, disk_bus: str | None = None,
                  device_type: str | None = None, tag: str | None = None,
                  delete_on_termination: bool = False) -> str:
    """Attach ``volume_id`` to the server; the device it will be.

    :raises InstanceInvalidState, InstanceIsLocked: (409)
    :raises VolumeNotFound: (404) no such volume, or not the caller's
    :raises InvalidVolume: (400) attached to the server already, or Cinder refuses to
        reserve it (not available...)
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'attach_volume', ATTACH_STATES)
    volume = api.volume_api.get(context, volume_id)
    # Cinder lets the server that holds a volume attach it again (a move to another
    # host does): a second mapping of it must be refused here, as Nova does.
    if any(bdm.volume_id == volume_id for bdm in get_volume_mappings(api, context, instance)):
        raise exception.InvalidVolume(reason='volume %s already attached' % volume_id)
    api.volume_api.check_availability_zone(context, volume, instance=instance)
    if instance.vm_state == vm_states.SHELVED_OFFLOADED:
        return _attach_shelved_offloaded(api, context, instance, volume_id, device,
                                         disk_bus, device_type, tag, delete_on_termination)
    with api.host_context(context, instance) as cctxt:
        bdm = api.compute_rpcapi.reserve_block_device_name(
            cctxt, instance, device, volume_id, disk_bus=disk_bus, device_type=device_type,
            tag=tag, delete_on_termination=delete_on_termination)
        try:
            bdm.attachment_id = api.volume_api.attachment_create(
                cctxt, volume_id, instance.uuid)['id']
            bdm.save()
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.ATTACH_VOLUME,
                                                want_result=False)
            api.compute_rpcapi.attach_volume(cctxt, instance, bdm)
        except Exception:
            _forget(api, cctxt, bdm)
            raise
    return bdm.device_name or ''


def _attach_shelved_offloaded(api: API, context: RequestContext, instance: objects.Instance,
                              volume_id: str, device: str | None, disk_bus: str | None,
                              device_type: str | None, tag: str | None,
                              delete_on_termination: bool) -> str:
    """No host: the mapping and the reservation only (Nova gives no device name: the
    host it is unshelved on chooses it)."""
    with _in_cell(context, instance) as cctxt:
        bdm = objects.BlockDeviceMapping(
            cctxt, instance_uuid=instance.uuid, source_type='volume',
            destination_type='volume', volume_id=volume_id, device_name=None,
            disk_bus=disk_bus, device_type=device_type or 'disk', boot_index=None,
            delete_on_termination=delete_on_termination, tag=tag, no_device=False)
        bdm.create()
        try:
            bdm.attachment_id = api.volume_api.attachment_create(cctxt, volume_id,
                                                                 instance.uuid)['id']
            bdm.save()
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.ATTACH_VOLUME,
                                                want_result=False)
            # As Nova: completed without a connector, so Cinder shows the volume in-use;
            # the host the server is unshelved on gives the attachment its connector.
            api.volume_api.attachment_complete(cctxt, bdm.attachment_id)
        except Exception:
            _forget(api, cctxt, bdm)
            raise
    return ''


def _forget(api: API, context: RequestContext, bdm: objects.BlockDeviceMapping) -> None:
    """Undo an attach that did not reach the host: the reservation and the mapping."""
    api_volumes.forget(context, api.volume_api, bdm)


@contextlib.contextmanager
def _in_cell(context: RequestContext, instance: objects.Instance) -> Iterator[RequestContext]:
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
    assert mapping.cell_mapping is not None, 'a shelved server is in a cell'
    with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
        instance._context = cctxt
        yield cctxt


def detach_volume(api: API, context: RequestContext, instance: objects.Instance,
                  volume_id: str) -> None:
    """Detach ``volume_id`` from the server.

    :raises InstanceInvalidState, InstanceIsLocked: (409)
    :raises VolumeBDMNotFound: (404) the volume is not attached to the server
    :raises InvalidVolume: (400) the root volume, or Cinder refuses (not in use)
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'detach_volume', DETACH_STATES)
    bdm = _mapping(context, instance, volume_id)
    if bdm.is_root:
        raise exception.InvalidVolume(reason="Can't detach root device volume")
    if instance.vm_state == vm_states.SHELVED_OFFLOADED:
        with _in_cell(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.DETACH_VOLUME,
                                                want_result=False)
            bdm._context = cctxt
            _forget(api, cctxt, bdm)
            if bdm.delete_on_termination:
                # As Nova's local cleanup: the server's volume goes with its mapping.
                try:
                    api.volume_api.delete(cctxt, volume_id)
                except exception.NovaliteException as exc:
                    LOG.warning('Volume %s detached from shelved server %s could not be '
                                'deleted: %s', volume_id, instance.uuid, exc)
        return
    with api.host_context(context, instance) as cctxt:
        api.volume_api.begin_detaching(cctxt, volume_id)
        try:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.DETACH_VOLUME,
                                                want_result=False)
            api.compute_rpcapi.detach_volume(cctxt, instance, volume_id,
                                             bdm.attachment_id)
        except Exception:
            api.volume_api.roll_detaching(cctxt, volume_id)
            raise


def _mapping(context: RequestContext, instance: objects.Instance,
             volume_id: str) -> objects.BlockDeviceMapping:
    def get(cctxt: RequestContext) -> objects.BlockDeviceMapping | None:
        try:
            return objects.BlockDeviceMapping.get_by_volume_and_instance(cctxt, volume_id,
                                                                         instance.uuid)
        except exception.VolumeBDMNotFound:
            return None
    found = instance_edit.in_cell(context, instance.uuid, None, get)
    if found is None:
        raise exception.VolumeBDMNotFound(volume_id=volume_id)
    return found


def swap_volume(api: API, context: RequestContext, instance: objects.Instance,
                old_volume_id: str, new_volume_id: str) -> None:
    """Swap the server's volume ``old_volume_id`` for ``new_volume_id`` (an empty
    volume at least as large, which the host copies the disk to): Cinder is told the
    old one is ``detaching`` and the new one is reserved for the server (a new
    attachment), then the host is told to swap (``compute/volume_swap.py``). A failure
    before the host is told undoes both.

    :raises InstanceInvalidState, InstanceIsLocked: (409)
    :raises VolumeNotFound: (404 for the old volume; the API answers 400 for the new)
    :raises VolumeBDMNotFound: (404) the old volume is not attached to the server
    :raises InvalidVolume: (400) the old volume is attached elsewhere or busy, the new
        one is attached, smaller, in another zone or not available
    :raises Invalid: (400) the old volume is multiattach with more than one writer
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'swap_volume', SWAP_STATES)
    old_volume = api.volume_api.get(context, old_volume_id)
    new_volume = api.volume_api.get(context, new_volume_id)
    _check_swap(api, context, instance, old_volume, new_volume)
    _mapping(context, instance, old_volume_id)
    with api.host_context(context, instance) as cctxt:
        # Cinder refuses a volume that is not in use: the swap cannot race a detach.
        api.volume_api.begin_detaching(cctxt, old_volume_id)
        new_attachment_id: str | None = None
        try:
            # Counted once the old volume is detaching, so no attach slips in between.
            if _writers(api, cctxt, old_volume) > 1:
                raise exception.Invalid(message=MULTIATTACH_SWAP)
            new_attachment_id = api.volume_api.attachment_create(
                cctxt, new_volume_id, instance.uuid)['id']
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.SWAP_VOLUME,
                                                want_result=False)
            api.compute_rpcapi.swap_volume(cctxt, instance, old_volume_id, new_volume_id,
                                           new_attachment_id)
        except Exception:
            _undo_swap(api, cctxt, old_volume_id, new_attachment_id)
            raise
    LOG.info('Swapping volume %s of %s for %s', old_volume_id, instance.uuid,
             new_volume_id)


def _check_swap(api: API, context: RequestContext, instance: objects.Instance,
                old_volume: dict[str, Any], new_volume: dict[str, Any]) -> None:
    """Nova's checks of the two volumes (with Cinder's raw views: ``attachments`` a
    list of ``server_id``/``attachment_id``)."""
    if not any(a.get('server_id') == instance.uuid
               for a in old_volume.get('attachments') or []):
        raise exception.InvalidVolume(
            reason='Old volume is attached to a different instance.')
    if new_volume['id'] == old_volume['id'] or new_volume.get('attachments') or \
            new_volume.get('status') == 'in-use':
        raise exception.InvalidVolume(reason='New volume must be detached in order to '
                                             'swap.')
    if int(new_volume.get('size') or 0) < int(old_volume.get('size') or 0):
        raise exception.InvalidVolume(reason='New volume must be the same size or larger.')
    api.volume_api.check_availability_zone(context, new_volume, instance=instance)
    # A volume being attached to the server already has its mapping (Nova's
    # _check_volume_already_attached).
    if any(bdm.volume_id == new_volume['id']
           for bdm in get_volume_mappings(api, context, instance)):
        raise exception.InvalidVolume(reason='volume %s already attached'
                                      % new_volume['id'])


def _writers(api: API, context: RequestContext, volume: dict[str, Any]) -> int:
    """How many attachments may write the volume: all of them, unless there are several
    (a multiattach volume), then those Cinder says are ``rw``."""
    attachments = volume.get('attachments') or []
    if len(attachments) <= 1:
        return len(attachments)
    count = 0
    for attachment in attachments:
        try:
            mode = api.volume_api.attachment_get(
                context, attachment['attachment_id']).get('attach_mode')
        except exception.VolumeAttachmentNotFound:
            continue
        count += 1 if mode != 'ro' else 0
    return count


def _undo_swap(api: API, context: RequestContext, old_volume_id: str,
               new_attachment_id: str | None) -> None:
    """A swap the host was not told of: the old volume in use again, the new one's
    reservation deleted; what cannot be undone now is logged."""
    try:
        api.volume_api.roll_detaching(context, old_volume_id)
    except Exception as exc:
        LOG.warning('Could not tell Cinder that volume %s is in use again: %s',
                    old_volume_id, exc)
    if new_attachment_id:
        try:
            api.volume_api.attachment_delete(context, new_attachment_id)
        except Exception as exc:
            LOG.warning('Could not delete the attachment %s: %s', new_attachment_id, exc)
