"""The server tags API (2.26): /servers/{server_id}/tags[/{tag}]."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob
import webob.exc

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import server_tags as schema
from novalite.api.validation import parameter_types as pt
from novalite.api.validation import validators
from novalite.policies import server_tags as st_policies

if TYPE_CHECKING:
    from novalite import objects

POLICY = st_policies.POLICY_ROOT
_TAG_CHECK = validators.SchemaValidator(pt.tag)


class ServerTagsController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> objects.Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(POLICY % action, common.instance_target(instance))
        return instance

    @wsgi.api_version('2.26')
    @validation.no_body
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        return {'tags': list(self._instance(req, server_id, 'index').tags)}

    @wsgi.api_version('2.26')
    @wsgi.response(204)
    @validation.no_body
    def show(self, req: wsgi.Request, server_id: str, id: str) -> None:
        if id not in self._instance(req, server_id, 'show').tags:
            raise webob.exc.HTTPNotFound(
                explanation="Server %s has no tag '%s'" % (server_id, id))

    @wsgi.api_version('2.26')
    @validation.schema(schema.update_all)
    def update_all(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'update_all')
        return {'tags': self.compute_api.set_tags(req.context, instance, body['tags'])}

    @wsgi.api_version('2.26')
    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, server_id: str, id: str,
               body: dict | None = None) -> webob.Response:
        instance = self._instance(req, server_id, 'update')
        try:
            _TAG_CHECK.validate(id)
        except Exception as exc:
            raise webob.exc.HTTPBadRequest(explanation=(
                "Tag '%s' is invalid. It must be a non empty string without characters "
                "'/' and ','. Validation error message: %s" % (id, exc))) from exc
        tags = list(instance.tags)
        if id in tags:
            return webob.Response(status=204)
        if len(tags) >= pt.MAX_TAGS:
            raise webob.exc.HTTPBadRequest(
                explanation='The number of tags exceeded the per-server limit %d'
                % pt.MAX_TAGS)
        self.compute_api.set_tags(req.context, instance, tags + [id])
        resp = webob.Response(status=201)
        resp.headers['Location'] = '%s/%s' % (req.path_url.rsplit('/', 1)[0], id)
        del resp.content_type
        return resp

    @wsgi.api_version('2.26')
    @wsgi.response(204)
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        instance = self._instance(req, server_id, 'delete')
        if id not in instance.tags:
            raise webob.exc.HTTPNotFound(
                explanation="Server %s has no tag '%s'" % (server_id, id))
        self.compute_api.set_tags(req.context, instance,
                                  [t for t in instance.tags if t != id])

    @wsgi.api_version('2.26')
    @wsgi.response(204)
    @validation.no_body
    def delete_all(self, req: wsgi.Request, server_id: str) -> None:
        instance = self._instance(req, server_id, 'delete_all')
        self.compute_api.set_tags(req.context, instance, [])
