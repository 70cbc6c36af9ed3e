"""The compute API's rebuild: a server spawned again, on its host, from an image.

The new image, name, metadata, key pair, user data and hostname are written on the
instance with the ``rebuilding`` task in one save; the conductor then checks that a
new image suits the host and the host rebuilds. As in Nova, the allocation is left as
it is (the flavor does not change).

A volume-backed server has no image of its own: its image is the one its root volume
was made from (Cinder's ``volume_image_metadata``), and the instance's ``image_ref``
stays empty across a rebuild, as in Nova. Below API 2.93 it may be rebuilt with that
same image only (its volumes are kept as they are); from 2.93
(``reimage_boot_volume``) Cinder writes the requested image, any, onto the root volume
(``compute/rebuild_volume.py``), once the image is seen to fit in it and Cinder to
offer the re-image (volume API 3.68).

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novalite import exception, objects
from novalite.compute import (
    api_images,
    disk_config,
    instance_actions,
    instance_edit,
    task_states,
    vm_states,
)
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

REBUILD_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.ERROR)
_UNSET = object()
GIB = 1 << 30


class ImageUnacceptable(exception.Invalid):
    msg_fmt = 'Image %(image_id)s is unacceptable: %(reason)s'


def rebuild(api: API, context: RequestContext, instance: objects.Instance, image_href: str,
            admin_password: str | None, files_to_inject: list | None = None,
            preserve_ephemeral: bool = False, name: str | None = None,
            metadata: dict | None = None, access_ip_v4: Any = _UNSET,
            access_ip_v6: Any = _UNSET, key_name: Any = _UNSET,
            user_data: Any = _UNSET, hostname: str | None = None,
            description: Any = _UNSET, auto_disk_config: bool | None = None,
            reimage_boot_volume: bool = False) -> None:
    """:param reimage_boot_volume: (API 2.93) re-image the root volume of a
        volume-backed server; without it such a server keeps its image
    :raises InstanceIsLocked, InstanceInvalidState: (409)
    :raises ImageNotFound, ImageNotActive, FlavorMemoryTooSmall,
        FlavorDiskTooSmall, KeypairNotFound, MetadataLimitExceeded,
        AutoDiskConfigDisabledByImage, ImageUnacceptable, InvalidVolume,
        VolumeSmallerThanMinDisk: bad request
    :raises CinderAPIVersionNotAvailable: Cinder cannot re-image a volume (before 3.68)
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'rebuild', REBUILD_VM_STATES)
    volume_backed = not instance.image_ref
    image: dict = {}
    auto_disk: bool | None = None
    if not volume_backed:
        image = api.check_image(context, image_href, instance.flavor)
        # The new image decides the disk config the request leaves open, as in Nova.
        auto_disk = disk_config.for_image(image, auto_disk_config)
    if metadata is not None:
        instance_edit.check_metadata_quota(metadata)
    key_data: Any = _UNSET
    if key_name is not _UNSET:
        assert context.user_id is not None, 'an API request has a user'
        key_data = objects.KeyPair.get_by_name(context, context.user_id, key_name) \
            .public_key if key_name else None
    orig_image_ref: str | None = instance.image_ref
    orig_sys_metadata = dict(instance.system_metadata or {})
    with api.host_context(context, instance) as cctxt:
        bdms = list(objects.BlockDeviceMappingList.get_by_instance_uuid(cctxt, instance.uuid))
        if volume_backed:
            image, orig_image_ref = _volume_backed_image(api, context, instance, image_href,
                                                         bdms, reimage_boot_volume)
            auto_disk = disk_config.for_image(image, auto_disk_config)
        _check_volume_status(api, context, bdms)
        updates = {'display_name': name, 'metadata': metadata, 'hostname': hostname,
                   'auto_disk_config': auto_disk}
        for field, value in updates.items():
            if value is not None:
                setattr(instance, field, value)
        for field, value in (('access_ip_v4', access_ip_v4),
                             ('access_ip_v6', access_ip_v6),
                             ('key_name', key_name), ('key_data', key_data),
                             ('user_data', user_data),
                             ('display_description', description)):
            if value is not _UNSET:
                setattr(instance, field, value)
        if image['id'] != orig_image_ref:
            instance.system_metadata = _image_system_metadata(orig_sys_metadata, image)
        if not volume_backed:
            instance.image_ref = image['id']
        instance.progress = 0
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.REBUILD, want_result=False)
        api.compute_task_api.rebuild_instance(
            cctxt, instance, image=image, orig_image_ref=orig_image_ref or '',
            orig_sys_metadata=orig_sys_metadata, admin_password=admin_password,
            injected_files=files_to_inject or [],
            preserve_ephemeral=preserve_ephemeral,
            reimage_boot_volume=volume_backed and reimage_boot_volume)


def _volume_backed_image(api: API, context: RequestContext, instance: objects.Instance,
                         image_href: str, bdms: list[objects.BlockDeviceMapping],
                         reimage_boot_volume: bool) -> tuple[dict, str | None]:
    """The image a volume-backed server is rebuilt with, checked against its root
    volume, and the image that volume holds now.

    :raises ImageUnacceptable: another image than the volume's, below 2.93
    :raises CinderAPIVersionNotAvailable: Cinder cannot re-image the volume
    """
    root = next((bdm for bdm in bdms if bdm.is_root and bdm.volume_id), None)
    if root is None:
        # Not the user's fault: without it there is no volume to rebuild from.
        raise exception.NovaliteException(
            'Unable to find root block device mapping for volume-backed instance.')
    assert root.volume_id is not None
    volume = api.volume_api.get(context, root.volume_id)
    orig_image_ref = (volume.get('volume_image_metadata') or {}).get('image_id')
    if orig_image_ref != image_href and not reimage_boot_volume:
        raise ImageUnacceptable(
            image_id=image_href,
            reason='Unable to rebuild with a different image for a volume-backed server.')
    image = _check_image_for_volume(api, context, image_href, instance.flavor, volume)
    if reimage_boot_volume:
        servers = {a.get('server_id') for a in volume.get('attachments') or []}
        if len(servers) > 1:
            raise exception.InvalidVolume(reason='Cannot re-image a volume which is '
                                                 'attached to more than one server.')
        if not api.volume_api.supports_reimage(context):
            raise exception.CinderAPIVersionNotAvailable(version='3.68')
    return image, orig_image_ref


def _check_image_for_volume(api: API, context: RequestContext, image_href: str,
                            flavor: objects.Flavor, volume: dict) -> dict:
    """The image, active, fitting the flavor's memory and the volume (Nova checks the
    image's min_disk against the volume, not the flavor's disk; Cinder then refuses an
    image larger than the volume)."""
    image = api.image_api.get(context, image_href)
    if image.get('status') != 'active':
        raise exception.ImageNotActive(image_id=image_href)
    if flavor.memory_mb < int(image.get('min_ram') or 0):
        raise exception.FlavorMemoryTooSmall()
    volume_size = int(volume.get('size') or 0) * GIB
    min_disk = int(image.get('min_disk') or 0) * GIB
    if volume_size and min_disk > volume_size:
        raise exception.VolumeSmallerThanMinDisk(volume_size=volume_size,
                                                 image_min_disk=min_disk)
    image_size = int(image.get('size') or 0)
    if volume_size and image_size > volume_size:
        raise ImageUnacceptable(
            image_id=image_href,
            reason='Size of the image (%d bytes) is larger than the root volume %s '
                   '(%d bytes).' % (image_size, volume['id'], volume_size))
    return image


def _check_volume_status(api: API, context: RequestContext,
                         bdms: list[objects.BlockDeviceMapping]) -> None:
    """Every volume of the server ``in-use``, as Nova checks before a rebuild (its
    attachments are replaced or reused on the host).

    :raises InvalidVolume:
    """
    for bdm in bdms:
        if bdm.is_volume and bdm.volume_id:
            api.volume_api.check_attached(context, api.volume_api.get(context,
                                                                      bdm.volume_id))


def _image_system_metadata(sysmeta: dict, image: dict) -> dict[str, Any]:
    """The system metadata with the old image's ``image_*`` keys replaced by the new
    image's, as Nova resets them on a rebuild to another image."""
    kept = {k: v for k, v in sysmeta.items() if not k.startswith('image_')}
    for field in ('min_ram', 'min_disk', 'disk_format', 'container_format'):
        if image.get(field) is not None:
            kept['image_%s' % field] = str(image[field])
    for key, value in api_images.image_properties(image).items():
        kept['image_%s' % key] = value[:255]
    kept['image_base_image_ref'] = image['id']
    return kept
