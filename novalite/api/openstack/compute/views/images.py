"""Views of the images proxy: Glance v2 images as the Compute API showed them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_serialization import jsonutils
from oslo_utils import strutils, timeutils

from novalite.api.openstack import common
from novalite.compute.api_images import GLANCE_CORE

if TYPE_CHECKING:
    from collections.abc import Callable

    from novalite.api.openstack import wsgi

# Glance's image statuses as the Compute API names them, and the progress it shows.
_STATUS = {'active': 'ACTIVE', 'queued': 'SAVING', 'saving': 'SAVING',
           'deleted': 'DELETED', 'pending_delete': 'DELETED', 'killed': 'ERROR'}
_PROGRESS = {'queued': 25, 'saving': 50, 'active': 100}
# Properties Nova keeps as JSON strings in Glance and shows decoded.
_JSON_PROPERTIES = ('block_device_mapping', 'mappings')


def properties(image: dict[str, Any]) -> dict[str, Any]:
    """The custom properties of a Glance v2 image (its keys that are not Glance's own
    fields), the JSON-encoded ones decoded."""
    props = {k: v for k, v in image.items() if k not in GLANCE_CORE}
    for key in _JSON_PROPERTIES:
        if isinstance(props.get(key), str):
            try:
                props[key] = jsonutils.loads(props[key])
            except ValueError:
                pass
    return props


def _isotime(value: str | None) -> str | None:
    return common.isotime(timeutils.parse_isotime(value)) if value else None


class ViewBuilder(common.ViewBuilder):

    _collection_name = 'images'

    def __init__(self, image_url: Callable[[str], str]) -> None:
        """:param image_url: ``image_id -> URL`` of the image in Glance (the link
            whose rel is ``alternate``)."""
        self._image_url = image_url

    def _links(self, req: wsgi.Request, image_id: str) -> list[dict[str, str]]:
        return self._get_links(req, image_id) + [
            {'rel': 'alternate', 'type': 'application/vnd.openstack.image',
             'href': self._image_url(image_id)}]

    def basic(self, req: wsgi.Request, image: dict[str, Any]) -> dict[str, Any]:
        return {'id': image.get('id'), 'name': image.get('name'),
                'links': self._links(req, image['id'])}

    def show(self, req: wsgi.Request, image: dict[str, Any]) -> dict[str, Any]:
        metadata = properties(image)
        status = image.get('status')
        view: dict[str, Any] = {
            'id': image.get('id'),
            'name': image.get('name'),
            'minRam': int(image.get('min_ram') or 0),
            'minDisk': int(image.get('min_disk') or 0),
            'metadata': metadata,
            'created': _isotime(image.get('created_at')),
            'updated': _isotime(image.get('updated_at')),
            'status': _STATUS.get(status or '', 'UNKNOWN'),
            'progress': _PROGRESS.get(status or '', 0),
            # Glance shows no size until the data is there; Nova's client made it 0.
            'OS-EXT-IMG-SIZE:size': image.get('size') or 0,
            'links': self._links(req, image['id']),
        }
        server_id = metadata.get('instance_uuid')
        if server_id is not None:
            view['server'] = {'id': server_id,
                              'links': self._get_links(req, server_id, 'servers')}
        auto_disk_config = metadata.get('auto_disk_config')
        if auto_disk_config is not None:
            view['OS-DCF:diskConfig'] = (
                'AUTO' if strutils.bool_from_string(auto_disk_config) else 'MANUAL')
        return view

    def index(self, req: wsgi.Request, images: list[dict[str, Any]]) -> dict[str, Any]:
        return self._list(req, [self.basic(req, i) for i in images], images, 'images')

    def detail(self, req: wsgi.Request, images: list[dict[str, Any]]) -> dict[str, Any]:
        return self._list(req, [self.show(req, i) for i in images], images,
                          'images/detail')

    def _list(self, req: wsgi.Request, views: list[dict[str, Any]], images: list[dict[str, Any]],
              collection: str) -> dict[str, Any]:
        body: dict[str, Any] = {'images': views}
        links = self._get_collection_links(req, images, collection, id_key='id')
        if links:
            body['images_links'] = links
        return body
