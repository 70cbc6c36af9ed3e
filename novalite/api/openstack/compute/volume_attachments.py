"""A server's volume attachments: /servers/{server_id}/os-volume_attachments[/{id}].

List and show read the server's volume mappings; attach and detach go through the
compute API (``compute/api_volume_attach.py``) to the server's host, with Cinder's
attachment API. The views follow the microversions as Nova's: ``tag`` from 2.70,
``delete_on_termination`` from 2.79, ``attachment_id`` and ``bdm_uuid`` (and no
``id``) from 2.89. A PUT with another volume swaps the server's volume for it (an
administrator's or Cinder's, ``swap`` policy; before 2.85 every PUT is a swap): as in
Nova 34, only while Cinder migrates the old volume (a retype or a migration of an
attached volume), else 409. From 2.85 a PUT may also change ``delete_on_termination``.
"""
from __future__ import annotations

from typing import Any

import webob.exc
from oslo_utils import strutils

from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import servers
from novalite.api.openstack.compute.schemas import volume_attachments as schema
from novalite.conf import CONF
from novalite.objects.instance import Instance
from novalite.policies import volumes_attachments as va_policies
from novalite.volume import cinder

POLICY = va_policies.POLICY_ROOT
NOT_MIGRATING = 'volume %s is not migrating; this API should only be called by Cinder'


def _view(req: wsgi.Request, server_id: str, bdm: objects.BlockDeviceMapping,
          listing: bool) -> dict[str, Any]:
    view: dict[str, Any] = {'serverId': server_id, 'volumeId': bdm.volume_id,
                            'device': bdm.device_name}
    if not (listing and avr.is_supported(req, '2.89')):
        view['id'] = bdm.volume_id
    if avr.is_supported(req, '2.70'):
        view['tag'] = bdm.tag
    if avr.is_supported(req, '2.79'):
        view['delete_on_termination'] = bdm.delete_on_termination
    if listing and avr.is_supported(req, '2.89'):
        view['attachment_id'] = bdm.attachment_id
        view['bdm_uuid'] = bdm.uuid
    return view


def _limit_offset(req: wsgi.Request) -> tuple[int, int]:
    """Nova's ``limit`` (capped by ``[api] max_limit``) and ``offset`` of a list."""
    params = req.GET
    max_limit = CONF.api.max_limit
    try:
        limit = min(int(params.get('limit', max_limit)), max_limit)
        offset = int(params.get('offset', 0))
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(explanation='limit and offset must be integers'
                                       ) from exc
    return limit, offset


class VolumeAttachmentController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(POLICY % action, {'project_id': instance.project_id})
        return instance

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        instance = self._instance(req, server_id, 'index')
        bdms = self.compute_api.get_volume_mappings(req.context, instance)
        limit, offset = _limit_offset(req)
        limited = bdms[offset:offset + limit]
        return {'volumeAttachments': [_view(req, server_id, bdm, listing=True)
                                      for bdm in limited]}

    # Nova 34 defines a strict 2.102 variant of this query but does not use it.
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        instance = self._instance(req, server_id, 'show')
        bdm = self._find(req, instance, id)
        return {'volumeAttachment': _view(req, server_id, bdm, listing=True)}

    def _find(self, req: wsgi.Request, instance: Instance,
              volume_id: str) -> objects.BlockDeviceMapping:
        for bdm in self.compute_api.get_volume_mappings(req.context, instance):
            if bdm.volume_id == volume_id:
                return bdm
        raise webob.exc.HTTPNotFound(
            explanation='Instance %s is not attached to volume %s' % (instance.uuid,
                                                                      volume_id))

    @validation.schema(schema.create, '2.1', '2.48')
    @validation.schema(schema.create_v249, '2.49', '2.78')
    @validation.schema(schema.create_v279, '2.79')
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'create')
        if not cinder.configured():
            raise webob.exc.HTTPBadRequest(explanation=servers.NO_CINDER)
        attachment = body['volumeAttachment']
        volume_id = attachment['volumeId']
        delete_on_termination = strutils.bool_from_string(
            attachment.get('delete_on_termination', False), strict=True)
        try:
            device = self.compute_api.attach_volume(
                req.context, instance, volume_id, device=attachment.get('device'),
                tag=attachment.get('tag'), delete_on_termination=delete_on_termination)
        except exception.VolumeNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        except (exception.InstanceIsLocked, exception.InstanceInvalidState) as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        except (exception.InvalidVolume, exception.InvalidBDM) as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        view: dict[str, Any] = {'id': volume_id, 'serverId': server_id,
                                'volumeId': volume_id, 'device': device}
        if avr.is_supported(req, '2.70'):
            view['tag'] = attachment.get('tag')
        if avr.is_supported(req, '2.79'):
            view['delete_on_termination'] = delete_on_termination
        return {'volumeAttachment': view}

    @wsgi.response(202)
    @validation.schema(schema.update, '2.1', '2.84')
    @validation.schema(schema.update_v285, '2.85')
    def update(self, req: wsgi.Request, server_id: str, id: str, body: dict) -> None:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        attachment = body['volumeAttachment']
        new_volume_id = attachment['volumeId']
        # Before 2.85 a PUT only swaps; from 2.85 it updates the attachment, then swaps
        # when the volumeId is another volume's.
        only_swap = not avr.is_supported(req, '2.85')
        if only_swap or new_volume_id != id:
            context.can(POLICY % 'swap', {})
        else:
            context.can(POLICY % 'update', {'project_id': instance.project_id})
        if not only_swap:
            self._update_regular(req, instance, server_id, id, attachment)
        if only_swap or new_volume_id != id:
            self._swap(req, instance, id, new_volume_id)

    def _update_regular(self, req: wsgi.Request, instance: Instance, server_id: str,
                        volume_id: str, attachment: dict[str, Any]) -> None:
        bdm = self._find(req, instance, volume_id)
        for key in ('device', 'tag', 'serverId', 'id'):
            wanted = attachment.get(key)
            current = {'device': bdm.device_name, 'tag': bdm.tag, 'serverId': server_id,
                       'id': volume_id}[key]
            if key in attachment and wanted != current:
                raise webob.exc.HTTPBadRequest(
                    explanation="The %s of a volume attachment cannot be changed" % key)
        if 'delete_on_termination' in attachment:
            bdm.delete_on_termination = strutils.bool_from_string(
                attachment['delete_on_termination'], strict=True)
            bdm.save()

    def _swap(self, req: wsgi.Request, instance: Instance, old_volume_id: str,
              new_volume_id: str) -> None:
        """Nova's swap: 404 for the old volume (in the path) or its attachment, 409
        when Cinder is not migrating the old volume, 400 for the new one (in the body)
        and for what Cinder or the checks refuse."""
        if not cinder.configured():
            raise webob.exc.HTTPBadRequest(explanation=servers.NO_CINDER)
        try:
            old_volume = self.compute_api.volume_api.get(req.context, old_volume_id)
        except exception.VolumeNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        # Nova 34 (bug 2112187): only Cinder swaps, when it migrates or retypes an
        # attached volume; its migration_status says so (an administrator sees it).
        if not old_volume.get('migration_status'):
            raise webob.exc.HTTPConflict(explanation=NOT_MIGRATING % old_volume_id)
        try:
            self.compute_api.swap_volume(req.context, instance, old_volume_id,
                                         new_volume_id)
        except exception.VolumeNotFound as exc:
            if exc.kwargs.get('volume_id') == new_volume_id:
                raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        except exception.VolumeBDMNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        except (exception.InstanceIsLocked, exception.InstanceInvalidState) as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        except exception.Invalid as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        instance = self._instance(req, server_id, 'delete')
        try:
            self.compute_api.detach_volume(req.context, instance, id)
        except exception.VolumeBDMNotFound as exc:
            raise webob.exc.HTTPNotFound(
                explanation='Instance %s is not attached to volume %s' % (server_id, id)
            ) from exc
        except (exception.InstanceIsLocked, exception.InstanceInvalidState) as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        except exception.InvalidVolume as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
