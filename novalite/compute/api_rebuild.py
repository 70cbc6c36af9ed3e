"""The compute API's rebuild: a server spawned again, on its host, from an image.

The new image, name, metadata, key pair, user data and hostname are written on the
instance with the ``rebuilding`` task in one save; the conductor then checks that a
new image suits the host and the host rebuilds. As in Nova, the allocation is left as
it is (the flavor does not change).

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


def rebuild(api: API, context: RequestContext, instance: objects.Instance, image_href: str,
            admin_password: str | None, files_to_inject: list | None = None,
            preserve_ephemeral: bool = False, name: str | None = None,
            metadata: dict | None = None, access_ip_v4: Any = _UNSET,
            access_ip_v6: Any = _UNSET, key_name: Any = _UNSET,
            user_data: Any = _UNSET, hostname: str | None = None,
            description: Any = _UNSET, auto_disk_config: bool | None = None) -> None:
    """:raises InstanceIsLocked, InstanceInvalidState: (409)
    :raises ImageNotFound, ImageNotActive, FlavorMemoryTooSmall,
        FlavorDiskTooSmall, KeypairNotFound, MetadataLimitExceeded,
        AutoDiskConfigDisabledByImage: bad request
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'rebuild', REBUILD_VM_STATES)
    if not instance.image_ref:
        raise exception.InvalidInput(
            reason='Rebuilding a volume-backed server (re-imaging its root volume in '
                   'Cinder, microversion 2.93) is not supported by novalite yet.')
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
    orig_image_ref = instance.image_ref
    orig_sys_metadata = dict(instance.system_metadata or {})
    with api.host_context(context, instance) as cctxt:
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
        instance.image_ref = image['id']
        instance.progress = 0
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.REBUILD, want_result=False)
        api.compute_task_api.rebuild_instance(
            cctxt, instance, image=image, orig_image_ref=orig_image_ref,
            orig_sys_metadata=orig_sys_metadata, admin_password=admin_password,
            injected_files=files_to_inject or [],
            preserve_ephemeral=preserve_ephemeral)


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
