"""The compute API's images of servers: createImage and createBackup (and the image
record shelve snapshots into).

The image is created in Glance (queued) by the API, with Nova's snapshot metadata:
the server's image properties (from its system metadata, less those a snapshot must
not inherit), ``image_type``, ``instance_uuid``, ``user_id``, ``base_image_ref`` and
the owner; the host then uploads the data. An image whose snapshot never starts is
deleted again.

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import instance_actions, instance_edit, task_states, vm_states
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

LOG = logging.getLogger(__name__)

# Nova's states for snapshots and backups.
SNAPSHOT_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.PAUSED,
                      vm_states.SUSPENDED)
# Fields of a Glance image that are not properties (Glance sets or owns them).
GLANCE_CORE = frozenset((
    'id', 'name', 'status', 'visibility', 'owner', 'checksum', 'container_format',
    'disk_format', 'min_ram', 'min_disk', 'size', 'virtual_size', 'created_at',
    'updated_at', 'tags', 'file', 'schema', 'self', 'direct_url', 'locations',
    'os_hash_algo', 'os_hash_value', 'os_hidden', 'protected', 'stores', 'properties',
    'deleted', 'deleted_at'))
# Image fields kept in system metadata beside the properties.
_SYSMETA_FIELDS = ('min_ram', 'min_disk', 'disk_format', 'container_format')
# Properties a snapshot does not inherit from its server's image (Nova's list): they
# describe the original image's data, not the snapshot's.
NON_INHERITABLE = frozenset((
    'cache_in_nova', 'bittorrent', 'img_signature_hash_method', 'img_signature',
    'img_signature_key_type', 'img_signature_certificate_uuid', 'base_image_ref',
    'owner_project_name', 'owner_user_name', 'instance_uuid', 'user_id', 'image_type',
    'backup_type', 'image_location', 'image_state', 'boot_roles'))


def image_properties(image: dict[str, Any]) -> dict[str, str]:
    """The custom properties of a Glance v2 image: its top-level keys that are not
    Glance's own fields (and those of a nested ``properties``, as v1 had them)."""
    props = {k: str(v) for k, v in (image.get('properties') or {}).items() if v is not None}
    props.update({k: str(v) for k, v in image.items()
                  if k not in GLANCE_CORE and isinstance(v, (str, int, float, bool))})
    return props


def snapshot_metadata(context: RequestContext, instance: objects.Instance, name: str,
                      image_type: str,
                      extra_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nova's metadata of a new snapshot of ``instance`` (Glance v2, top-level)."""
    sysmeta = instance.system_metadata or {}
    meta: dict[str, Any] = {'name': name}
    for field in _SYSMETA_FIELDS:
        value = sysmeta.get('image_%s' % field)
        if value not in (None, ''):
            meta[field] = int(value) if field.startswith('min_') else value
    for key, value in sysmeta.items():
        prop = key[len('image_'):]
        if key.startswith('image_') and prop not in _SYSMETA_FIELDS \
                and prop not in NON_INHERITABLE and prop not in GLANCE_CORE \
                and value is not None:
            meta[prop] = value
    meta.update({k: str(v) for k, v in (extra_properties or {}).items()})
    meta.update({'image_type': image_type, 'instance_uuid': instance.uuid,
                 'user_id': str(context.user_id),
                 'base_image_ref': sysmeta.get('image_base_image_ref') or
                 instance.image_ref or '',
                 'owner': context.project_id})
    if context.project_id != instance.project_id:
        # Made by someone of another project (an admin): not shown to the server's.
        meta['visibility'] = 'private'
    return meta


def create_image_record(api: API, context: RequestContext, instance: objects.Instance, name: str,
                        image_type: str,
                        extra_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """Create the (queued) Glance image a snapshot of ``instance`` goes into."""
    meta = snapshot_metadata(context, instance, name, image_type, extra_properties)
    return api.image_api.create(context, meta)


def delete_image_quietly(api: API, context: RequestContext, image_id: str) -> None:
    try:
        api.image_api.delete(context, image_id)
    except Exception:
        LOG.exception('Could not delete image %s of an abandoned snapshot', image_id)


def snapshot(api: API, context: RequestContext, instance: objects.Instance, name: str,
             extra_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """createImage: the server's root disk as a new image.

    :returns: the queued Glance image (its data follows from the host)
    """
    instance_edit.check_instance_state(instance, 'snapshot', SNAPSHOT_VM_STATES)
    instance_edit.check_metadata_quota(extra_properties or {})
    return _start_snapshot(
        api, context, instance, name, 'snapshot', extra_properties,
        instance_actions.CREATE_IMAGE, task_states.IMAGE_SNAPSHOT_PENDING,
        lambda cctxt, image: api.compute_rpcapi.snapshot_instance(
            cctxt, instance, image['id']))


def backup(api: API, context: RequestContext, instance: objects.Instance, name: str,
           backup_type: str, rotation: int,
           extra_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """createBackup: a snapshot marked as a backup of ``backup_type``; the host then
    keeps only the ``rotation`` newest of them."""
    instance_edit.check_instance_state(instance, 'backup', SNAPSHOT_VM_STATES)
    properties = dict(extra_properties or {}, backup_type=backup_type)
    instance_edit.check_metadata_quota(extra_properties or {})
    return _start_snapshot(
        api, context, instance, name, 'backup', properties, instance_actions.BACKUP,
        task_states.IMAGE_BACKUP,
        lambda cctxt, image: api.compute_rpcapi.backup_instance(
            cctxt, instance, image['id'], backup_type, rotation))


def _start_snapshot(api: API, context: RequestContext, instance: objects.Instance, name: str,
                    image_type: str, properties: dict[str, Any] | None, action: str,
                    task_state: str,
                    cast: Callable[[RequestContext, dict[str, Any]], None]) -> dict[str, Any]:
    """Create the image, set the task, record the action, cast; an image whose
    snapshot cannot start is deleted (the server changed state meanwhile)."""
    with api.host_context(context, instance) as cctxt:
        image = create_image_record(api, cctxt, instance, name, image_type, properties)
        try:
            instance.task_state = task_state
            instance.save(expected_task_state=[None])
        except (exception.InstanceInvalidState, exception.InstanceNotFound):
            delete_image_quietly(api, cctxt, image['id'])
            raise
        objects.InstanceAction.action_start(cctxt, instance.uuid, action,
                                            want_result=False)
        cast(cctxt, image)
    return image
