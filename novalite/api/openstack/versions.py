"""The version documents: ``GET /`` lists the API versions, ``GET /v2.1`` shows v2.1.

Both answer without authentication, so clients can discover the microversion range.
"""
from __future__ import annotations

from typing import Any

import webob
import webob.dec
from oslo_serialization import jsonutils

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import faults
from novalite.api.openstack.compute.views import versions as views_versions

VERSIONS: dict[str, dict[str, Any]] = {
    'v2.0': {
        'id': 'v2.0', 'status': 'SUPPORTED', 'version': '', 'min_version': '',
        'updated': '2011-01-21T11:33:21Z', 'path': 'v2/',
    },
    'v2.1': {
        'id': 'v2.1', 'status': 'CURRENT', 'version': avr.MAX_VERSION.get_string(),
        'min_version': avr.MIN_VERSION.get_string(), 'updated': '2013-07-23T11:33:21Z',
        'path': 'v2.1/',
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
    def factory(cls, global_conf: dict, **local_conf: Any) -> Versions:
        return cls()


class VersionV21:
    """``GET /v2.1`` and ``GET /v2.1/``: the document of v2.1 alone."""

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        return _only_get(req) or _json(views_versions.build_version(req, VERSIONS['v2.1']))

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: Any) -> VersionV21:
        return cls()
