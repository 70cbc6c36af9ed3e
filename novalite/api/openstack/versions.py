"""The version documents: ``GET /`` lists the API versions, ``GET /v2.1`` and ``/v2``
show one.

They answer without authentication, so clients can discover the microversion range.
"""
from __future__ import annotations

from typing import Any

import webob
import webob.dec
import webob.exc
from oslo_serialization import jsonutils

from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import faults, wsgi
from novalite.api.openstack.compute.views import versions as views_versions

VERSIONS: dict[str, dict[str, Any]] = {
    'v2.0': {
        'id': 'v2.0', 'status': 'DEPRECATED', 'version': '', 'min_version': '',
        'updated': '2025-07-04T12:00:00Z', 'path': 'v2/', 'media_version': '2',
    },
    'v2.1': {
        'id': 'v2.1', 'status': 'CURRENT', 'version': avr.MAX_VERSION.get_string(),
        'min_version': avr.MIN_VERSION.get_string(), 'updated': '2013-07-23T11:33:21Z',
        'path': 'v2.1/', 'media_version': '2.1',
    },
}


def _json(body: dict, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json', charset='utf-8')
    resp.body = jsonutils.dump_as_bytes(body)
    return resp


def _only_get(req: webob.Request) -> webob.Response | None:
    if req.method not in ('GET', 'HEAD'):
        return faults.json_fault(405, 'The method %s is not allowed here.' % req.method,
                                 {'Allow': 'GET'})
    return None


class Versions:
    """``GET /``: every API version this endpoint serves."""

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        if req.path_info not in ('', '/'):
            return faults.json_fault(404, 'The resource could not be found.')
        return _only_get(req) or _json(views_versions.build_versions(req, VERSIONS))

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: str) -> Versions:
        return cls()


class VersionV21:
    """``GET /v2.1`` and ``GET /v2.1/``: the document of v2.1 alone; behind
    ``/v2`` (the legacy wrapper marks the request) the document of v2.0."""

    @webob.dec.wsgify(RequestClass=wsgi.Request)
    def __call__(self, req: wsgi.Request) -> webob.Response:
        info = VERSIONS['v2.0' if req.is_legacy_v2() else 'v2.1']
        return _only_get(req) or _json(views_versions.build_version(req, info))

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: str) -> VersionV21:
        return cls()


class VersionsController(wsgi.Controller):
    """``GET /v2.1/{project_id}/`` and ``GET /v2.1/versions/{id}``: the version documents
    inside the API (authenticated), as Nova's route table has them."""

    @validation.no_body
    def show(self, req: wsgi.Request, id: str = 'v2.1') -> dict:
        if req.is_legacy_v2():
            id = 'v2.0'
        if id not in VERSIONS:
            raise webob.exc.HTTPNotFound()
        return views_versions.build_version(req, VERSIONS[id])
