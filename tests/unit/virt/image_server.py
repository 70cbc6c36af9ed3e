"""ImageServer: a Glance v2 double that serves image data, and counts its downloads.

Metadata (``GET /v2/images/{id}``) and data (``GET /v2/images/{id}/file``), with the
size and hashes Glance records, so the client's verification runs for real. Faults
can be injected per image: a 500 for the next N data requests, data that differs from
the recorded hash, a delay before the data.

Snapshots write too: ``POST /v2/images`` (queued), ``PUT /v2/images/{id}/file``
(active, with size and hashes), JSON-patch ``PATCH /v2/images/{id}``, ``DELETE``, and
``GET /v2/images`` with exact-match filters on fields and properties and a
``sort=created_at:desc``-style sort. Visibility is not enforced.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.parse
import uuid
from datetime import UTC, datetime
from typing import Any

from novalite.allinone.wsgi import WSGIServer


class ImageWritesMixin:
    """The write half of a Glance v2 double (create, upload, patch, delete, list), over
    ``self.images``, ``self.data``, ``self.deleted`` and ``self._lock``."""

    images: dict[str, dict]
    data: dict[str, bytes]
    deleted: list[str]
    _lock: threading.Lock

    # -- writes --------------------------------------------------------------------------

    def _write(self, environ: dict, start_response: Any, method: str,
               parts: list[str]) -> list[bytes]:
        if parts[:2] != ['v2', 'images']:
            return _json(start_response, '404 Not Found', {'message': 'not found'})
        if len(parts) == 2 and method == 'GET':
            return _json(start_response, '200 OK',
                         {'images': self._list(environ.get('QUERY_STRING', ''))})
        if len(parts) == 2 and method == 'POST':
            return _json(start_response, '201 Created', self._create(_body(environ)))
        image = self.images.get(parts[2]) if len(parts) > 2 else None
        if image is None:
            return _json(start_response, '404 Not Found', {'message': 'not found'})
        if parts[3:] == ['file'] and method == 'PUT':
            self._store(image, environ['wsgi.input'].read(
                int(environ.get('CONTENT_LENGTH') or 0)) if environ.get('CONTENT_LENGTH')
                else _read_chunked(environ))
            return _reply(start_response, '204 No Content', b'')
        if len(parts) == 3 and method == 'PATCH':
            for op in _body(environ):
                key = op['path'].lstrip('/')
                if op['op'] == 'remove':
                    image.pop(key, None)
                else:
                    image[key] = op['value']
            image['updated_at'] = _now()
            return _json(start_response, '200 OK', image)
        if len(parts) == 3 and method == 'DELETE':
            with self._lock:
                self.images.pop(image['id'], None)
                self.data.pop(image['id'], None)
                self.deleted.append(image['id'])
            return _reply(start_response, '204 No Content', b'')
        return _reply(start_response, '405 Method Not Allowed', b'')

    def _create(self, meta: dict) -> dict:
        image = {'id': str(uuid.uuid4()), 'status': 'queued', 'visibility': 'shared',
                 'container_format': None, 'disk_format': None, 'min_ram': 0,
                 'min_disk': 0, 'size': None, 'checksum': None, 'owner': None,
                 'os_hash_algo': None, 'os_hash_value': None, 'created_at': _now()}
        image.update(meta)
        image['updated_at'] = image['created_at']
        with self._lock:
            self.images[image['id']] = image
        return image

    def _store(self, image: dict, data: bytes) -> None:
        image.update(status='active', size=len(data),
                     checksum=hashlib.md5(data, usedforsecurity=False).hexdigest(),
                     os_hash_algo='sha512', os_hash_value=hashlib.sha512(data).hexdigest(),
                     updated_at=_now())
        with self._lock:
            self.data[image['id']] = data

    def _list(self, query: str) -> list[dict]:
        params = dict(urllib.parse.parse_qsl(query))
        sort = params.pop('sort', None)
        found = [i for i in list(self.images.values())
                 if all(str(i.get(k)) == v for k, v in params.items())]
        if sort:
            key, _, direction = sort.partition(':')
            found.sort(key=lambda i: str(i.get(key) or ''), reverse=direction == 'desc')
        return found


class ImageServer(ImageWritesMixin):
    def __init__(self) -> None:
        self.images: dict[str, dict] = {}
        self.data: dict[str, bytes] = {}
        self.file_gets: dict[str, int] = {}
        self.fail_next: dict[str, int] = {}
        self.corrupt: set[str] = set()
        self.delay = 0.0
        self.deleted: list[str] = []
        self._lock = threading.Lock()
        self.server = WSGIServer(self.app)

    def add_image(self, data: bytes, disk_format: str = 'raw', name: str = 'img',
                  **props: Any) -> dict:
        image_id = str(uuid.uuid4())
        image = {'id': image_id, 'name': name, 'status': 'active', 'visibility': 'public',
                 'container_format': 'bare', 'disk_format': disk_format,
                 'min_ram': 0, 'min_disk': 0, 'size': len(data), 'owner': None,
                 'checksum': hashlib.md5(data, usedforsecurity=False).hexdigest(),
                 'os_hash_algo': 'sha512', 'os_hash_value': hashlib.sha512(data).hexdigest()}
        image.update(props)
        self.images[image_id] = image
        self.data[image_id] = data
        return image

    def start(self) -> str:
        self.server.start()
        return self.server.url

    def stop(self) -> None:
        self.server.stop()

    def app(self, environ: dict, start_response: Any) -> list[bytes]:
        parts = [p for p in environ.get('PATH_INFO', '').split('/') if p]
        method = environ['REQUEST_METHOD']
        if method != 'GET' or parts == ['v2', 'images']:
            return self._write(environ, start_response, method, parts)
        if parts in ([], ['v2']):
            return _json(start_response, '200 OK', {'versions': [{
                'id': 'v2.17', 'status': 'CURRENT',
                'links': [{'rel': 'self', 'href': self.server.url + '/v2/'}]}]})
        if parts[:2] != ['v2', 'images'] or len(parts) < 3 or parts[2] not in self.images:
            return _json(start_response, '404 Not Found', {'message': 'not found'})
        image_id = parts[2]
        if len(parts) == 3:
            return _json(start_response, '200 OK', self.images[image_id])
        if parts[3:] != ['file']:
            return _json(start_response, '404 Not Found', {'message': 'not found'})
        with self._lock:
            self.file_gets[image_id] = self.file_gets.get(image_id, 0) + 1
            failing = self.fail_next.get(image_id, 0)
            if failing:
                self.fail_next[image_id] = failing - 1
        if failing:
            return _reply(start_response, '500 Internal Server Error', b'boom')
        time.sleep(self.delay)
        data = self.data[image_id]
        if image_id in self.corrupt:
            # The first byte flipped (a fixed b'X' is no change when the data starts so).
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        return _reply(start_response, '200 OK', data, 'application/octet-stream')


def _now() -> str:
    return datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def _body(environ: dict) -> Any:
    length = int(environ.get('CONTENT_LENGTH') or 0)
    return json.loads(environ['wsgi.input'].read(length) or b'null')


def _read_chunked(environ: dict) -> bytes:
    """The body of a request without Content-Length (read to the end)."""
    return environ['wsgi.input'].read()


def _reply(start_response: Any, status: str, data: bytes,
           content_type: str = 'text/plain') -> list[bytes]:
    start_response(status, [('Content-Type', content_type),
                            ('Content-Length', str(len(data)))])
    return [data]


def _json(start_response: Any, status: str, body: dict) -> list[bytes]:
    return _reply(start_response, status, json.dumps(body).encode(), 'application/json')
