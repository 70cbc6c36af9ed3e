"""The image metadata proxy (2.1 to 2.38, 404 from 2.39): an image's custom Glance
properties as ``/images/{image_id}/metadata[/{key}]``, written back to Glance whole."""
from __future__ import annotations

from typing import Any

import webob.exc
from oslo_serialization import jsonutils

from novalite import context as nl_context
from novalite import exception, quota
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import image_metadata as schema
from novalite.api.openstack.compute.views import images as views
from novalite.image import glance


def check_quota(context: nl_context.RequestContext, metadata: dict[str, Any]) -> None:
    """Refuse more properties than the project's ``metadata_items`` quota (403)."""
    if not metadata:
        return
    limit = quota.get_limits(context, context.project_id, context.user_id).get(
        'metadata_items', -1)
    if 0 <= limit < len(metadata):
        raise webob.exc.HTTPForbidden(explanation='Image metadata limit exceeded')


class ImageMetadataController(wsgi.Controller):

    def __init__(self, image_api: glance.API | None = None) -> None:
        super().__init__()
        self.image_api = image_api or glance.API()

    def _image(self, context: nl_context.RequestContext, image_id: str) -> dict[str, Any]:
        try:
            return self.image_api.get(context, image_id)
        except exception.ImageNotAuthorized as exc:
            raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
        except exception.ImageNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation='Image not found.') from exc

    def _save(self, context: nl_context.RequestContext, image: dict[str, Any],
              metadata: dict[str, Any], check: bool = True) -> dict[str, Any]:
        """Write ``metadata`` as the image's whole set of properties."""
        if check:
            check_quota(context, metadata)
        current = views.properties(image)
        try:
            return self.image_api.replace_properties(
                context, image, {k: _glance_value(v) for k, v in metadata.items()},
                current)
        except exception.ImageNotAuthorized as exc:
            raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
        except exception.ImageNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation='Image not found.') from exc

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @validation.no_body
    def index(self, req: wsgi.Request, image_id: str) -> dict:
        return {'metadata': views.properties(self._image(req.context, image_id))}

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @validation.no_body
    def show(self, req: wsgi.Request, image_id: str, id: str) -> dict:
        metadata = views.properties(self._image(req.context, image_id))
        if id not in metadata:
            raise webob.exc.HTTPNotFound()
        return {'meta': {id: metadata[id]}}

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, image_id: str, body: dict) -> dict:
        image = self._image(req.context, image_id)
        metadata = dict(views.properties(image), **body['metadata'])
        return {'metadata': views.properties(self._save(req.context, image, metadata))}

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, image_id: str, id: str, body: dict) -> dict:
        meta = body['meta']
        if id not in meta:
            raise webob.exc.HTTPBadRequest(explanation='Request body and URI mismatch')
        image = self._image(req.context, image_id)
        self._save(req.context, image, dict(views.properties(image), **meta))
        return {'meta': meta}

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @validation.schema(schema.update_all)
    def update_all(self, req: wsgi.Request, image_id: str, body: dict) -> dict:
        image = self._image(req.context, image_id)
        metadata = body['metadata']
        self._save(req.context, image, metadata)
        return {'metadata': metadata}

    @wsgi.api_version('2.1', avr.MAX_IMAGE_META_PROXY_API_VERSION)
    @wsgi.response(204)
    @validation.no_body
    def delete(self, req: wsgi.Request, image_id: str, id: str) -> None:
        image = self._image(req.context, image_id)
        metadata = views.properties(image)
        if id not in metadata:
            raise webob.exc.HTTPNotFound(explanation='Invalid metadata key')
        del metadata[id]
        self._save(req.context, image, metadata, check=False)


def _glance_value(value: object) -> str:
    """Glance keeps property values as strings; Nova's JSON-decoded ones go back as
    JSON."""
    if isinstance(value, str):
        return value
    return jsonutils.dumps(value)
