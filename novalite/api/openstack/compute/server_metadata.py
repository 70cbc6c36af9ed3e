"""The server metadata API: /servers/{server_id}/metadata[/{key}]."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import server_metadata as schema
from novalite.policies import server_metadata as sm_policies

if TYPE_CHECKING:
    from novalite import objects

POLICY = sm_policies.POLICY_ROOT


class ServerMetadataController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> objects.Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(POLICY % action, common.instance_target(instance))
        return instance

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        instance = self._instance(req, server_id, 'index')
        return {'metadata': dict(instance.metadata)}

    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'create')
        return {'metadata': self.compute_api.update_instance_metadata(
            req.context, instance, body['metadata'])}

    @validation.schema(schema.update_all)
    def update_all(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'update_all')
        return {'metadata': self.compute_api.update_instance_metadata(
            req.context, instance, body['metadata'], delete=True)}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        instance = self._instance(req, server_id, 'show')
        if id not in instance.metadata:
            raise webob.exc.HTTPNotFound(explanation='Metadata item was not found')
        return {'meta': {id: instance.metadata[id]}}

    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, server_id: str, id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'update')
        meta = body['meta']
        if id not in meta:
            raise webob.exc.HTTPBadRequest(explanation='Request body and URI mismatch')
        self.compute_api.update_instance_metadata(req.context, instance, meta)
        return {'meta': meta}

    @wsgi.response(204)
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        instance = self._instance(req, server_id, 'delete')
        if id not in instance.metadata:
            raise webob.exc.HTTPNotFound(explanation='Metadata item was not found')
        self.compute_api.delete_instance_metadata(req.context, instance, id)
