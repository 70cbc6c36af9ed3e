"""A server's volume attachments: /servers/{server_id}/os-volume_attachments[/{id}].

novalite has no Block Storage service, so a server has no volume: the list is empty
and any volume is not attached (404), as Nova answers for a server without volumes.
Attach, update (swap) and detach are checked as Nova checks them (body, server,
policy) and then refused with a 400 that says why.
"""
from __future__ import annotations

import webob.exc

from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import volume_attachments as schema
from novalite.objects.instance import Instance
from novalite.policies import volumes_attachments as va_policies

POLICY = va_policies.POLICY_ROOT
NO_CINDER = ('Volumes need the Block Storage service (Cinder), which novalite does not '
             'support: no volume can be attached to or detached from a server.')


class VolumeAttachmentController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(POLICY % action, {'project_id': instance.project_id})
        return instance

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        self._instance(req, server_id, 'index')
        return {'volumeAttachments': []}

    # Nova 34 defines a strict 2.102 variant of this query but does not use it.
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        self._instance(req, server_id, 'show')
        raise webob.exc.HTTPNotFound(
            explanation='Instance %s is not attached to volume %s' % (server_id, id))

    @validation.schema(schema.create, '2.1', '2.48')
    @validation.schema(schema.create_v249, '2.49', '2.78')
    @validation.schema(schema.create_v279, '2.79')
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        self._instance(req, server_id, 'create')
        raise webob.exc.HTTPBadRequest(explanation=NO_CINDER)

    @validation.schema(schema.update, '2.1', '2.84')
    @validation.schema(schema.update_v285, '2.85')
    def update(self, req: wsgi.Request, server_id: str, id: str, body: dict) -> None:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        # Before 2.85 a PUT only swaps; from 2.85 a new volumeId still means a swap.
        if not avr.is_supported(req, '2.85') or body['volumeAttachment']['volumeId'] != id:
            context.can(POLICY % 'swap', {})
        else:
            context.can(POLICY % 'update', {'project_id': instance.project_id})
        raise webob.exc.HTTPBadRequest(explanation=NO_CINDER)

    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        self._instance(req, server_id, 'delete')
        raise webob.exc.HTTPBadRequest(explanation=NO_CINDER)
