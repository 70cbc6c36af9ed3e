"""Fields of the server view that later microversions added (2.16 to 2.100)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novalite import exception, objects
from novalite.api.openstack import api_version_request as avr
from novalite.compute import instance_edit
from novalite.conf import CONF
from novalite.policies import servers as srv_policies
from novalite.servicegroup import api as servicegroup_api

if TYPE_CHECKING:
    from novalite.api.openstack import wsgi
    from novalite.context import RequestContext

# Keys the update response leaves out before 2.75 (it showed no extension fields).
NOT_IN_UPDATE_BEFORE_275 = ('OS-EXT-', 'OS-SRV-USG:', 'os-extended-volumes:',
                            'config_drive', 'key_name', 'security_groups', 'host_status')

# Image properties live in system metadata as image_<name>; these are not properties.
_NOT_IMAGE_PROPERTIES = ('base_image_ref', 'min_ram', 'min_disk', 'disk_format',
                         'container_format')


def _get(instance: objects.Instance, name: str, default: object = None) -> Any:
    """A field of ``instance``, ``default`` while unset or None (see views.servers)."""
    value = getattr(instance, '_obj_' + name, None)
    return default if value is None else value


def host_status_answers(req: wsgi.Request, instances: list) -> dict:
    """``host_status`` per server uuid for callers who may see it (2.16), else {}."""
    if not avr.is_supported(req, '2.16') or not instances:
        return {'host_status': {}}
    context = req.context
    own = {'project_id': context.project_id, 'user_id': context.user_id}
    full = context.can(srv_policies.SERVERS % 'show:host_status', own, fatal=False)
    unknown_only = not full and context.can(
        srv_policies.SERVERS % 'show:host_status:unknown-only', own, fatal=False)
    if not (full or unknown_only):
        return {'host_status': {}}
    statuses = instance_edit.host_statuses(instances, servicegroup_api.API())
    if unknown_only:
        statuses = {uuid: status for uuid, status in statuses.items()
                    if status == instance_edit.HOST_STATUS_UNKNOWN}
    return {'host_status': statuses}


def request_specs(req: wsgi.Request, instances: list) -> dict:
    """The request specs the 2.96+ fields need, for every listed server in one query
    (not one API-database read per server on the list path)."""
    if not avr.is_supported(req, '2.96') or not instances:
        return {}
    return {'request_specs': objects.RequestSpec.get_by_instance_uuids(
        req.context, [i.uuid for i in instances])}


def volumes_attached(req: wsgi.Request, instances: list[objects.Instance]
                     ) -> dict[str, list[dict[str, object]]]:
    """``os-extended-volumes:volumes_attached`` of each server: its volume mappings, read
    once per cell for the whole list (a server still being scheduled has none)."""
    by_cell: dict[str | None, tuple[RequestContext, list[str]]] = {}
    for instance in instances:
        if not instance.obj_attr_is_set('id'):
            continue
        context = instance._context
        cell = getattr(context, 'cell_uuid', None)
        if cell is None and not CONF.database.connection:
            continue  # no cell database to read it from (a test's made-up server)
        by_cell.setdefault(cell, (context, []))[1].append(instance.uuid)
    with_delete = avr.is_supported(req, '2.3')
    found: dict[str, list[dict[str, object]]] = {}
    for context, uuids in by_cell.values():
        for uuid, volumes in objects.BlockDeviceMappingList.volumes_attached(
                context, uuids).items():
            found[uuid] = [dict({'id': volume_id},
                                **({'delete_on_termination': delete} if with_delete else {}))
                           for volume_id, delete in volumes]
    return found


def _request_spec(instance: objects.Instance, extend: dict) -> objects.RequestSpec | None:
    if 'request_specs' in extend:
        return extend['request_specs'].get(instance.uuid)
    try:
        return objects.RequestSpec.get_by_instance_uuid(instance._context, instance.uuid)
    except exception.RequestSpecNotFound:
        return None


def _server_groups(instance: objects.Instance) -> list[str]:
    group_cls = getattr(objects, 'InstanceGroup', None)
    if group_cls is None:
        return []
    try:
        group = group_cls.get_by_instance_uuid(instance._context, instance.uuid)
    except exception.NotFound:
        return []
    return [group.uuid]


def _image_properties(instance: objects.Instance) -> dict:
    system_metadata = _get(instance, 'system_metadata', {})
    return {key[len('image_'):]: value for key, value in system_metadata.items()
            if key.startswith('image_') and
            key[len('image_'):] not in _NOT_IMAGE_PROPERTIES}


def by_microversion(req: wsgi.Request, instance: objects.Instance, extend: dict,
                    for_show: bool) -> dict:
    """The later fields of one server's view, for the request's microversion."""
    fields: dict[str, Any] = {}
    if instance.uuid in extend.get('host_status', {}):
        fields['host_status'] = extend['host_status'][instance.uuid]
    if avr.is_supported(req, '2.63'):
        # novalite does not verify image signatures: never any certificates.
        fields['trusted_image_certificates'] = None
    if for_show and avr.is_supported(req, '2.71'):
        fields['server_groups'] = _server_groups(instance)
    if avr.is_supported(req, '2.73'):
        locked = bool(_get(instance, 'locked'))
        fields['locked_reason'] = (_get(instance, 'system_metadata', {})
                                   .get('locked_reason') if locked else None)
    if avr.is_supported(req, '2.96'):
        spec = _request_spec(instance, extend)
        fields['pinned_availability_zone'] = getattr(spec, 'availability_zone', None) \
            if spec is not None and spec.obj_attr_is_set('availability_zone') else None
        if avr.is_supported(req, '2.100'):
            hints = spec.scheduler_hints if spec is not None and \
                spec.obj_attr_is_set('scheduler_hints') else None
            # As the request spec keeps them: a list per hint, even for a hint given
            # as one string (clients iterate over each value).
            fields['scheduler_hints'] = {key: list(value) for key, value in
                                         (hints or {}).items()}
    return fields


def image_with_properties(req: wsgi.Request, instance: objects.Instance,
                          image: dict | str) -> dict | str:
    """The image reference, with the image's properties from 2.98."""
    if isinstance(image, dict) and avr.is_supported(req, '2.98'):
        return dict(image, properties=_image_properties(instance))
    return image
