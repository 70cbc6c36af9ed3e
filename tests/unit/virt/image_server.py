"""ImageServer: a Glance v2 double that serves image data, and counts its downloads.

Metadata (``GET /v2/images/{id}``) and data (``GET /v2/images/{id}/file``), with the
size and hashes Glance records, so the client's verification runs for real. Faults
can be injected per image: a 500 for the next N data requests, data that differs from
the recorded hash, a delay before the data.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from typing import Any

from novalite.allinone.wsgi import WSGIServer


class ImageServer:
    def __init__(self) -> None:
        self.images: dict[str, dict] = {}
        self.data: dict[str, bytes] = {}
        self.file_gets: dict[str, int] = {}
        self.fail_next: dict[str, int] = {}
        self.corrupt: set[str] = set()
        self.delay = 0.0
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
        if environ['REQUEST_METHOD'] != 'GET':
            return _reply(start_response, '405 Method Not Allowed', b'')
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
            data = b'X' + data[1:]
        return _reply(start_response, '200 OK', data, 'application/octet-stream')


def _reply(start_response: Any, status: str, data: bytes,
           content_type: str = 'text/plain') -> list[bytes]:
    start_response(status, [('Content-Type', content_type),
                            ('Content-Length', str(len(data)))])
    return [data]


def _json(start_response: Any, status: str, body: dict) -> list[bytes]:
    return _reply(start_response, status, json.dumps(body).encode(), 'application/json')
