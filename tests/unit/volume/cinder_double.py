"""A Cinder v3 test double: a small WSGI app that keeps volumes, snapshots and
attachments in memory, answers as Cinder's API does (bodies, statuses, fault format),
and records every request with its headers.

Not Cinder: no scheduler, no backend, no policy. A volume is ``creating`` for
``settle_after`` reads, then ``available`` (or ``error`` when its name says so). Faults
are injected per request (``fail_next``), the microversions offered are chosen
(``max_version``), and an attachment's delete answers 500 without the service role, as
the real Cinder does when it cannot ask Nova (see /work/shared/CINDER.md).

``os-reimage`` (3.68) writes the image at once, off the request (``downloading``, then
the status before); for a ``reserved`` volume it hands Cinder's ``volume-reimaged``
events to ``notify`` (a test posts them to the compute API), as Cinder's nova notifier
does; ``reimage_failures`` makes the next re-images fail as a backend would (the volume
in ``error``, no event).
"""
from __future__ import annotations

import json
import re
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fixtures.wsgi_server import WSGIServer

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

_FAULTS = {400: 'badRequest', 403: 'forbidden', 404: 'itemNotFound', 409: 'conflict',
           413: 'overLimit', 500: 'computeFault', 504: 'computeFault'}
_REASONS = {200: 'OK', 202: 'Accepted', 204: 'No Content', 300: 'Multiple Choices',
            400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict',
            413: 'Request Entity Too Large', 500: 'Internal Server Error',
            504: 'Gateway Timeout'}
RBD_CONNECTION = {'name': 'volumes/volume-%s', 'hosts': ['127.0.0.1'], 'ports': ['6789'],
                  'cluster_name': 'ceph', 'auth_enabled': True, 'auth_username': 'cinder',
                  'secret_type': 'ceph', 'secret_uuid': 'b0b1e4d2-0000-4000-8000-000000000001',
                  'discard': True, 'access_mode': 'rw', 'encrypted': False}


@dataclass
class Seen:
    """One request as the double received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    status: int
    message: str
    count: int
    path: str | None


class _Answer(Exception):
    def __init__(self, status: int, body: Any = None) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _fault(status: int, message: str) -> _Answer:
    return _Answer(status, {_FAULTS.get(status, 'computeFault'):
                            {'message': message, 'code': status}})


@dataclass
class CinderDouble:
    """The app; ``server`` serves it on a loopback port once ``start()`` ran."""

    max_version: str = '3.71'
    settle_after: int = 0
    volume_quota: int = 10
    # The next this many volumes created settle in ``error`` (a backend that failed).
    errors_next: int = 0
    # The next this many re-images fail in the backend: volume in ``error``, no event.
    reimage_failures: int = 0
    # Where Cinder's events about a re-imaged reserved volume go (None: nowhere).
    notify: Callable[[list[dict[str, Any]]], object] | None = None
    volumes: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    attachments: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    _reads: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.server = WSGIServer(self)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> CinderDouble:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def fail_next(self, status: int, message: str = 'injected', count: int = 1,
                  path: str | None = None) -> None:
        """Answer the next ``count`` API requests (whose path contains ``path``, if
        given) with ``status`` and Cinder's fault body."""
        self.faults.append(Fault(status, message, count, path))

    def add_volume(self, size: int = 1, status: str = 'available', **fields: Any
                   ) -> dict[str, Any]:
        """A volume the user made beforehand (in ``status``); ``fields`` overrides
        Cinder's keys (``bootable``, ``availability_zone``, ``volume_image_metadata``)."""
        volume_id = str(uuid.uuid4())
        volume = {'id': volume_id, 'status': status, 'size': size, 'name': None,
                  'description': None, 'availability_zone': 'nova', 'attachments': [],
                  'multiattach': False, 'bootable': 'true', 'encrypted': False,
                  'volume_type': '__DEFAULT__', 'snapshot_id': None, 'metadata': {}}
        volume.update(fields)
        self.volumes[volume_id] = volume
        return volume

    def add_snapshot(self, volume_id: str) -> dict[str, Any]:
        """An available snapshot of the volume ``volume_id``."""
        snapshot_id = str(uuid.uuid4())
        snapshot = {'id': snapshot_id, 'status': 'available',
                    'size': self.volumes[volume_id]['size'], 'volume_id': volume_id,
                    'name': None, 'description': None, 'metadata': {}}
        self.snapshots[snapshot_id] = snapshot
        return snapshot

    def attachments_of(self, server_id: str) -> list[dict[str, Any]]:
        """The attachments Cinder holds for the server ``server_id``."""
        return [a for a in self.attachments.values() if a['instance'] == server_id]

    def requests(self, method: str | None = None) -> list[Seen]:
        """The API's requests (not the version document's), optionally by method."""
        return [s for s in self.seen if s.path != '/' and (method is None or s.method == method)]

    # -- WSGI ------------------------------------------------------------------------

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        length = int(environ.get('CONTENT_LENGTH') or 0)
        raw = environ['wsgi.input'].read(length) if length else b''
        seen = Seen(environ['REQUEST_METHOD'], environ['PATH_INFO'],
                    environ.get('QUERY_STRING', ''),
                    {k[5:].replace('_', '-').title(): v for k, v in environ.items()
                     if k.startswith('HTTP_')},
                    json.loads(raw) if raw else None)
        self.seen.append(seen)
        try:
            status, body = 200, self._dispatch(seen)
        except _Answer as answer:
            status, body = answer.status, answer.body
        if isinstance(body, tuple):
            status, body = body
        data = json.dumps(body).encode() if body is not None else b''
        start_response('%d %s' % (status, _REASONS.get(status, 'Unknown')),
                       [('Content-Type', 'application/json'),
                        ('Content-Length', str(len(data)))])
        return [data]

    def _dispatch(self, seen: Seen) -> Any:
        if seen.path == '/':
            return 300, {'versions': [
                {'id': 'v3.0', 'status': 'CURRENT', 'version': self.max_version,
                 'min_version': '3.0', 'links': [{'rel': 'self', 'href': self.url + '/v3/'}]}]}
        for fault in self.faults:
            if fault.count > 0 and (fault.path is None or fault.path in seen.path):
                fault.count -= 1
                raise _fault(fault.status, fault.message)
        match = re.match(r'^/v3(?:/[0-9a-zA-Z_-]+?)??/(volumes|snapshots|attachments)'
                         r'(?:/([^/]+))?(?:/(action))?$', seen.path)
        if not match:
            raise _fault(404, 'no route %s' % seen.path)
        collection, item, action = match.groups()
        handler = getattr(self, '_%s_%s' % (collection, seen.method.lower()))
        return handler(seen, item, action)

    # -- volumes -----------------------------------------------------------------------

    def _volume(self, volume_id: str) -> dict[str, Any]:
        if volume_id not in self.volumes:
            raise _fault(404, 'Volume %s could not be found.' % volume_id)
        volume = self.volumes[volume_id]
        reads = self._reads.get(volume_id, 0)
        if volume['status'] == 'creating' and reads >= self.settle_after:
            volume['status'] = 'error' if 'error' in (volume['name'] or '') or \
                volume.get('settles_in_error') else 'available'
        self._reads[volume_id] = reads + 1
        return volume

    def _volumes_get(self, seen: Seen, item: str | None, action: str | None) -> Any:
        if item == 'detail':
            return {'volumes': [self._volume(v) for v in list(self.volumes)]}
        assert item is not None
        return {'volume': self._volume(item)}

    def _volumes_post(self, seen: Seen, item: str | None, action: str | None) -> Any:
        if item is not None:
            return self._volume_action(self._volume(item), seen.body)
        spec = seen.body['volume']
        if len(self.volumes) >= self.volume_quota:
            raise _fault(413, 'VolumeLimitExceeded: Maximum number of volumes allowed '
                              '(%d) exceeded for quota \'volumes\'.' % self.volume_quota)
        if not isinstance(spec.get('size'), int) or spec['size'] < 1:
            raise _fault(400, 'Invalid input received: size must be a positive integer')
        if spec.get('snapshot_id') and spec['snapshot_id'] not in self.snapshots:
            raise _fault(404, 'Snapshot %s could not be found.' % spec['snapshot_id'])
        volume_id = str(uuid.uuid4())
        volume = {'id': volume_id, 'status': 'creating', 'size': spec['size'],
                  'name': spec.get('name'), 'description': spec.get('description'),
                  'availability_zone': spec.get('availability_zone') or 'nova',
                  'attachments': [], 'multiattach': False,
                  'bootable': 'true' if spec.get('imageRef') else 'false',
                  'encrypted': False, 'volume_type': spec.get('volume_type') or '__DEFAULT__',
                  'snapshot_id': spec.get('snapshot_id'),
                  'metadata': spec.get('metadata') or {}}
        if spec.get('imageRef'):
            volume['volume_image_metadata'] = {'image_id': spec['imageRef']}
        if self.errors_next > 0:
            self.errors_next -= 1
            volume['settles_in_error'] = True
        self.volumes[volume_id] = volume
        return 202, {'volume': volume}

    def _volume_action(self, volume: dict[str, Any], body: dict[str, Any]) -> Any:
        (name, _args), = body.items()
        if name == 'os-begin_detaching':
            if volume['status'] != 'in-use':
                raise _fault(400, 'Invalid volume: Unable to detach volume. Volume status '
                                  "must be 'in-use' and attach_status must be 'attached' "
                                  'to detach.')
            volume['status'] = 'detaching'
        elif name == 'os-roll_detaching':
            if volume['status'] == 'detaching':
                volume['status'] = 'in-use'
        elif name == 'os-reimage':
            return self._reimage(volume, _args)
        elif name == 'os-migrate_volume_completion':
            # As Cinder: the volume being migrated keeps its id, the new one's data.
            new = self._volume(_args['new_volume'])
            if volume.get('migration_status') not in ('migrating', 'retyping'):
                raise _fault(400, 'Invalid volume: Source volume not mid-migration.')
            volume['migration_status'] = 'success' if not _args.get('error') else 'error'
            new['status'] = 'deleting' if not _args.get('error') else new['status']
            return 200, {'save_volume_id': volume['id']}
        else:
            raise _fault(400, 'There is no such action: %s' % name)
        return 202, None

    def _reimage(self, volume: dict[str, Any], args: dict[str, Any]) -> Any:
        """As Cinder's ``API.reimage``: refused for a volume attached to more than one
        server (409) or in a status other than available, error (and reserved with
        ``reimage_reserved``); the copy then runs in the background."""
        servers = {a['instance'] for a in self.attachments.values()
                   if a['volume_id'] == volume['id']}
        if len(servers) > 1:
            raise _fault(409, 'Cannot re-image a volume which is attached to more than '
                              'one server.')
        allowed = ('available', 'error') + (('reserved',) if args.get(
            'reimage_reserved') else ())
        if volume['status'] not in allowed:
            raise _fault(400, 'Invalid volume: Volume %s status must be %s, but current '
                              'status is %s.' % (volume['id'], ' or '.join(allowed),
                                                 volume['status']))
        previous = volume['status']
        volume['status'] = 'downloading'
        threading.Thread(target=self._copy_image, args=(volume, args['image_id'], previous),
                         daemon=True).start()
        return 202, None

    def _copy_image(self, volume: dict[str, Any], image_id: str, previous: str) -> None:
        if self.reimage_failures > 0:
            self.reimage_failures -= 1
            volume['status'] = 'error'
            return
        volume['volume_image_metadata'] = dict(volume.get('volume_image_metadata') or {},
                                               image_id=image_id)
        volume['bootable'] = 'true'
        volume['status'] = previous
        if previous == 'reserved' and self.notify is not None:
            self.notify([{'name': 'volume-reimaged', 'server_uuid': a['instance'],
                          'tag': volume['id']} for a in self.attachments.values()
                         if a['volume_id'] == volume['id']])

    def _volumes_delete(self, seen: Seen, item: str | None, action: str | None) -> Any:
        assert item is not None
        volume = self._volume(item)
        if volume['status'] not in ('available', 'error') or any(
                snap['volume_id'] == item for snap in self.snapshots.values()):
            raise _fault(400, "Invalid volume: Volume status must be available or error "
                              "or error_restoring or error_extending or error_managing "
                              "and must not be migrating, attached, belong to a group, "
                              "have snapshots, awaiting a transfer, or be disassociated "
                              "from snapshots after volume transfer.")
        del self.volumes[item]
        return 202, None

    # -- snapshots ---------------------------------------------------------------------

    def _snapshot(self, snapshot_id: str) -> dict[str, Any]:
        if snapshot_id not in self.snapshots:
            raise _fault(404, 'Snapshot %s could not be found.' % snapshot_id)
        return self.snapshots[snapshot_id]

    def _snapshots_get(self, seen: Seen, item: str | None, action: str | None) -> Any:
        if item == 'detail':
            return {'snapshots': list(self.snapshots.values())}
        assert item is not None
        return {'snapshot': self._snapshot(item)}

    def _snapshots_post(self, seen: Seen, item: str | None, action: str | None) -> Any:
        spec = seen.body['snapshot']
        volume = self._volume(spec['volume_id'])
        if volume['status'] == 'in-use' and not spec.get('force'):
            raise _fault(400, "Invalid volume: Volume %s status must be available, but "
                              "current status is: in-use." % volume['id'])
        snapshot_id = str(uuid.uuid4())
        snapshot = {'id': snapshot_id, 'status': 'available', 'size': volume['size'],
                    'volume_id': volume['id'], 'name': spec.get('name'),
                    'description': spec.get('description'), 'metadata': {}}
        self.snapshots[snapshot_id] = snapshot
        return 202, {'snapshot': snapshot}

    def _snapshots_delete(self, seen: Seen, item: str | None, action: str | None) -> Any:
        assert item is not None
        self._snapshot(item)
        del self.snapshots[item]
        return 202, None

    # -- attachments -------------------------------------------------------------------

    def _attachment(self, attachment_id: str) -> dict[str, Any]:
        if attachment_id not in self.attachments:
            raise _fault(404, 'VolumeAttachment %s could not be found.' % attachment_id)
        return self.attachments[attachment_id]

    def _connect(self, attachment: dict[str, Any], connector: dict[str, Any]) -> None:
        info = dict(RBD_CONNECTION, name=RBD_CONNECTION['name'] % attachment['volume_id'],
                    volume_id=attachment['volume_id'], attachment_id=attachment['id'],
                    driver_volume_type='rbd')
        attachment['connection_info'] = info
        attachment['connector'] = connector

    def _attachments_post(self, seen: Seen, item: str | None, action: str | None) -> Any:
        if item is not None:
            attachment = self._attachment(item)
            assert seen.body == {'os-complete': None}, seen.body
            attachment['status'] = 'attached'
            volume = self.volumes[attachment['volume_id']]
            volume['status'] = 'in-use'
            # A shelved-offloaded server's attachment is completed with no connector.
            connector = attachment.get('connector') or {}
            volume['attachments'].append({'id': attachment['id'],
                                          'attachment_id': attachment['id'],
                                          'server_id': attachment['instance'],
                                          'volume_id': volume['id'],
                                          'device': connector.get('mountpoint')})
            return 204, None
        spec = seen.body['attachment']
        try:
            volume = self._volume(spec['volume_uuid'])
        except _Answer:
            raise _fault(404, 'Volume %s could not be found.' % spec['volume_uuid']) from None
        # As Cinder's _attachment_reserve: a volume not available takes another
        # attachment only for the server already holding one (a move to another host).
        same_server = any(a['volume_id'] == volume['id'] and
                          a['instance'] == spec['instance_uuid']
                          for a in self.attachments.values())
        if volume['status'] != 'available' and not volume['multiattach'] and \
                not (same_server and volume['status'] in ('reserved', 'in-use')):
            raise _fault(400, 'Invalid volume: Volume %s status must be available or '
                              'downloading' % volume['id'])
        attachment_id = str(uuid.uuid4())
        attachment = {'id': attachment_id, 'status': 'reserved',
                      'instance': spec['instance_uuid'], 'volume_id': volume['id'],
                      'attached_at': '', 'detached_at': '',
                      'attach_mode': spec.get('mode', 'null'), 'connection_info': {}}
        self.attachments[attachment_id] = attachment
        volume['status'] = 'reserved'
        if spec.get('connector'):
            self._connect(attachment, spec['connector'])
            volume['status'] = 'attaching'
        return {'attachment': self._view(attachment)}

    @staticmethod
    def _view(attachment: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attachment.items() if k != 'connector'}

    def _attachments_get(self, seen: Seen, item: str | None, action: str | None) -> Any:
        if item == 'detail':
            wanted = dict(urllib.parse.parse_qsl(seen.query))
            keys = {'instance_id': 'instance', 'volume_id': 'volume_id'}
            return {'attachments': [self._view(a) for a in self.attachments.values()
                                    if all(a[keys[k]] == v for k, v in wanted.items())]}
        assert item is not None
        return {'attachment': self._view(self._attachment(item))}

    def _attachments_put(self, seen: Seen, item: str | None, action: str | None) -> Any:
        assert item is not None
        attachment = self._attachment(item)
        self._connect(attachment, seen.body['attachment']['connector'])
        self.volumes[attachment['volume_id']]['status'] = 'attaching'
        return {'attachment': self._view(attachment)}

    def _attachments_delete(self, seen: Seen, item: str | None, action: str | None) -> Any:
        assert item is not None
        attachment = self._attachment(item)
        if attachment['connection_info'] and \
                seen.headers.get('X-Service-Roles') != 'service' and \
                'X-Service-Token' not in seen.headers:
            raise _fault(500, 'The server has either erred or is incapable of performing '
                              'the requested operation.')
        del self.attachments[item]
        volume = self.volumes[attachment['volume_id']]
        volume['attachments'] = [a for a in volume['attachments'] if a['id'] != item]
        # As Cinder's volume_detached: the status the attachments left decide.
        left = [a for a in self.attachments.values() if a['volume_id'] == volume['id']]
        if not left:
            volume['status'] = 'available'
        elif not volume['attachments'] and all(a['status'] == 'reserved' and
                                               not a['connection_info'] for a in left):
            volume['status'] = 'reserved'
        return {'attachments': []}
