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

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import strutils

from novalite import exception, objects, transient
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
    'backup_type', 'image_location', 'image_state', 'boot_roles',
    # What an image of a volume-backed server maps (its own, not its servers').
    'block_device_mapping', 'bdm_v2', 'root_device_name', 'mappings'))
# What a volume mapping keeps in an image's ``block_device_mapping`` (Nova's image
# mapping: no instance, attachment or connection of its own).
_IMAGE_MAPPING_FIELDS = ('source_type', 'destination_type', 'snapshot_id', 'volume_size',
                         'device_name', 'boot_index', 'delete_on_termination', 'disk_bus',
                         'device_type', 'guest_format', 'tag', 'volume_type', 'image_id',
                         'volume_id', 'no_device')
# Seconds the API waits for Cinder to finish the snapshots of a volume-backed server's
# image (RBD's take about a second): a server booted from the image at once needs them.
SNAPSHOT_WAIT = 60.0


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
    """createImage: the server's root disk as a new image (a volume-backed server's
    volumes as Cinder snapshots, which the image maps).

    :returns: the queued Glance image (its data follows from the host), or the active
        image of a volume-backed server
    """
    instance_edit.check_instance_state(instance, 'snapshot', SNAPSHOT_VM_STATES)
    instance_edit.check_metadata_quota(extra_properties or {})
    if not instance.image_ref:
        return snapshot_volume_backed(api, context, instance, name, extra_properties)
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
    if not instance.image_ref:
        raise exception.InvalidRequest(
            message='Backup is not supported for volume-backed instances.')
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


# -- volume-backed servers: images that map volume snapshots -------------------------------

def snapshot_volume_backed(api: API, context: RequestContext, instance: objects.Instance,
                           name: str, extra_properties: dict[str, Any] | None = None
                           ) -> dict[str, Any]:
    """Nova's ``snapshot_volume_backed``: a Cinder snapshot of each of the server's
    volumes, and an image with no data that maps them (``block_device_mapping``,
    ``bdm_v2``, ``root_device_name``); a server booted from it gets a copy of each.
    Snapshots made before a failure are deleted again.
    """
    meta = snapshot_metadata(context, instance, name, 'snapshot', extra_properties)
    # An image of properties only: Glance makes it active with no data, as raw/bare.
    meta.update(disk_format='raw', container_format='bare')
    bdms = api.get_volume_mappings(context, instance)
    made: list[str] = []
    mapping: list[dict[str, Any]] = []
    with api.host_context(context, instance) as cctxt:
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.CREATE_IMAGE,
                                            want_result=False)
        try:
            for bdm in bdms:
                assert bdm.volume_id is not None
                snap = api.volume_api.create_snapshot_force(
                    cctxt, bdm.volume_id, 'snapshot for %s' % name, '')
                made.append(snap['id'])
                mapping.append(_image_mapping(bdm, snap['id']))
            for snapshot_id in made:
                _wait_for_snapshot(api, cctxt, snapshot_id)
            meta.update(block_device_mapping=jsonutils.dumps(mapping), bdm_v2='True',
                        root_device_name=instance.root_device_name or '/dev/vda')
            image = api.image_api.create(cctxt, meta)
            # No data: an empty upload makes it active (Nova's Glance v2 way).
            api.image_api.upload(cctxt, image['id'], os.devnull)
        except Exception:
            for snapshot_id in made:
                try:
                    api.volume_api.delete_snapshot(cctxt, snapshot_id)
                except Exception as exc:
                    LOG.warning('Could not delete snapshot %s: %s', snapshot_id, exc)
            raise
    LOG.info('Image %s of volume-backed server %s maps %d volume snapshot(s)', image['id'],
             instance.uuid, len(made))
    return api.image_api.get(context, image['id'])


def _image_mapping(bdm: objects.BlockDeviceMapping, snapshot_id: str) -> dict[str, Any]:
    values = bdm.to_request()
    values.update(source_type='snapshot', destination_type='volume',
                  snapshot_id=snapshot_id, volume_id=None, image_id=None)
    return {k: values.get(k) for k in _IMAGE_MAPPING_FIELDS if values.get(k) is not None}


def _wait_for_snapshot(api: API, context: RequestContext, snapshot_id: str) -> None:
    def look() -> None:
        status = api.volume_api.get_snapshot(context, snapshot_id).get('status')
        if status == 'error':
            raise exception.VolumeError(status=500, method='POST', path='/snapshots',
                                        detail='snapshot %s went to error' % snapshot_id)
        if status != 'available':
            raise _NotYet()
    try:
        transient.call('Waiting for snapshot %s' % snapshot_id, look,
                       until=time.monotonic() + SNAPSHOT_WAIT, max_pause=1.0,
                       retryable=lambda exc: isinstance(exc, _NotYet), quiet=True)
    except _NotYet:
        raise exception.VolumeError(
            status=504, method='GET', path='/snapshots/%s' % snapshot_id,
            detail='the snapshot was not available after %d seconds' % SNAPSHOT_WAIT
        ) from None


class _NotYet(Exception):
    pass


def image_defined_mappings(image: dict[str, Any]) -> list[dict[str, Any]]:
    """The volume mappings an image of a volume-backed server defines (none for any
    other image): its ``block_device_mapping`` (v2 format, a JSON list in Glance v2)."""
    raw = image.get('block_device_mapping')
    if not raw or not strutils.bool_from_string(image.get('bdm_v2', False)):
        return []
    try:
        mappings = jsonutils.loads(raw) if isinstance(raw, str) else list(raw)
    except ValueError as exc:
        raise exception.InvalidBDMFormat(
            details='the image\'s block_device_mapping is not JSON') from exc
    found = []
    for mapping in mappings:
        if not isinstance(mapping, dict) or mapping.get('no_device') or \
                mapping.get('destination_type') != 'volume':
            continue
        values = {k: mapping.get(k) for k in _IMAGE_MAPPING_FIELDS}
        boot_index = values.get('boot_index')
        values['boot_index'] = None if boot_index in (None, -1, '-1') else int(str(boot_index))
        values['delete_on_termination'] = strutils.bool_from_string(
            values.get('delete_on_termination') or False)
        found.append({k: v for k, v in values.items() if v is not None or
                      k in ('boot_index',)})
    return found
