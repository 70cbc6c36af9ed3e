"""The images proxy (2.1 to 2.35, 404 from 2.36): Glance's images through the Compute
API, with Nova's filters and view; Glance decides who sees and deletes what."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import images as schema
from novalite.api.openstack.compute.views import images as views
from novalite.image import glance

if TYPE_CHECKING:
    from collections.abc import Mapping

# The Compute API's filters and the Glance v2 query parameters they become.
FILTERS = {'name': 'name', 'status': 'status', 'server': 'instance_uuid',
           'type': 'image_type', 'minRam': 'min_ram', 'minDisk': 'min_disk'}
_PROPERTY_PREFIX = 'property-'


def glance_filters(params: Mapping[str, str]) -> dict[str, str]:
    """Glance v2 query parameters from the request's filters: ``property-<name>``
    filters on a property, ``changes-since`` on ``updated_at``, ``server`` takes the
    server's id or its URL."""
    filters: dict[str, str] = {}
    for param in params:
        value = params[param]
        if param in FILTERS:
            filters[FILTERS[param]] = value
        elif param == 'changes-since':
            filters['updated_at'] = 'gte:' + value
        elif param.startswith(_PROPERTY_PREFIX):
            filters[param[len(_PROPERTY_PREFIX):]] = value
    if 'instance_uuid' in filters:
        filters['instance_uuid'] = filters['instance_uuid'].rsplit('/', 1)[-1]
    if 'status' in filters:
        filters['status'] = filters['status'].lower()
    return filters


def _int_param(req: wsgi.Request, name: str) -> int | None:
    if name not in req.GET:
        return None
    try:
        value = int(req.GET[name])
    except ValueError:
        value = -1
    if value < 0:
        raise webob.exc.HTTPBadRequest(
            explanation='%s must be an integer greater than or equal to 0' % name)
    return value


class ImagesController(wsgi.Controller[views.ViewBuilder]):

    def __init__(self, image_api: glance.API | None = None) -> None:
        super().__init__()
        self.image_api = image_api or glance.API()
        self._view_builder = views.ViewBuilder(self.image_api.image_url)

    def _list(self, req: wsgi.Request) -> list[dict[str, Any]]:
        try:
            return self.image_api.list_images(
                req.context, glance_filters(req.GET), limit=_int_param(req, 'limit'),
                marker=req.GET.get('marker'), page_size=_int_param(req, 'page_size'))
        except exception.Invalid as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        return self._view_builder.index(req, self._list(req))

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def detail(self, req: wsgi.Request) -> dict:
        return self._view_builder.detail(req, self._list(req))

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        try:
            image = self.image_api.get(req.context, id)
        except exception.ImageNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation='Image not found.') from exc
        return {'image': self._view_builder.show(req, image)}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @wsgi.response(204)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        try:
            self.image_api.delete(req.context, id)
        except exception.ImageNotAuthorized as exc:
            raise webob.exc.HTTPForbidden(
                explanation='You are not allowed to delete the image.') from exc
        except exception.ImageNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation='Image not found.') from exc
