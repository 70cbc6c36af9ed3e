"""Views of the version documents."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from novalite.api.openstack import wsgi


def _root_url(req: wsgi.Request) -> str:
    # The version documents may be mounted under a prefix (SCRIPT_NAME) by the
    # WSGI server; the /v2.1 part itself is stripped by the URL map.
    url = req.application_url
    for suffix in ('/v2.1', '/v2'):
        if url.endswith(suffix):
            url = url[:-len(suffix)]
    return url.rstrip('/') + '/'


def _version(req: wsgi.Request, info: dict) -> dict:
    return {
        'id': info['id'], 'status': info['status'], 'version': info['version'],
        'min_version': info['min_version'], 'updated': info['updated'],
        'links': [{'rel': 'self', 'href': _root_url(req) + info['path']}],
    }


def build_versions(req: wsgi.Request, versions: dict[str, dict]) -> dict:
    return {'versions': [_version(req, info) for info in versions.values()]}


def build_version(req: wsgi.Request, info: dict) -> dict:
    """One version's document; its ``self`` link is where it was asked for (the
    endpoint's URL), as in Nova."""
    version = _version(req, info)
    version['links'][0]['href'] = req.application_url.rstrip('/') + '/'
    version['links'].append({'rel': 'describedby', 'type': 'text/html',
                             'href': 'http://docs.openstack.org/'})
    version['media-types'] = [{'base': 'application/json',
                               'type': 'application/vnd.openstack.compute+json;version=%s'
                                       % info['media_version']}]
    return {'version': version}
