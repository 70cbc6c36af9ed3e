"""The os-volumes and os-snapshots proxies (2.1 to 2.35, 404 from 2.36): Cinder's volumes
and snapshots through the Compute API, in the view Nova gave them (camelCase keys, the
old ``display_name`` spelling, one attachment at most).

Cinder decides who sees what (it scopes to the caller's project). Its refusals keep
their meaning: not found 404, over quota 403, refused (attached, busy, bad size) 400,
unreachable 503. Without Cinder configured there are no volumes: lists are empty,
show and delete 404, and create says why (400), as a boot from volume does.
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import webob.exc
from oslo_utils import strutils, uuidutils

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import servers
from novalite.api.openstack.compute.schemas import volumes as schema
from novalite.conf import CONF
from novalite.policies import volumes as policies
from novalite.volume import cinder

if TYPE_CHECKING:
    from novalite.context import RequestContext

POLICY = policies.POLICY_NAME
MAX_VERSION = avr.MAX_PROXY_API_SUPPORT_VERSION

View = Callable[[Mapping[str, Any]], dict[str, Any]]


def volume_view(volume: Mapping[str, Any]) -> dict[str, Any]:
    """Nova's view of a Cinder (v3) volume."""
    return {'id': volume['id'], 'status': volume['status'], 'size': volume['size'],
            'availabilityZone': volume.get('availability_zone'),
            'createdAt': volume.get('created_at'),
            'attachments': [_attachment_view(volume)],
            'displayName': volume.get('name'),
            'displayDescription': volume.get('description'),
            # Cinder v3 names the type (Nova's proxy showed whatever Cinder gave).
            'volumeType': volume.get('volume_type'),
            'snapshotId': volume.get('snapshot_id'),
            'metadata': dict(volume.get('metadata') or {})}


def _attachment_view(volume: Mapping[str, Any]) -> dict[str, Any]:
    """The volume's first attachment, ``{}`` when it has none. Its ``id`` is the
    volume's, not the attachment's: Nova's proxy never showed attachment ids."""
    attachments = volume.get('attachments') or []
    if not attachments:
        return {}
    first = attachments[0]
    view = {'id': volume['id'], 'volumeId': volume['id'], 'serverId': first.get('server_id')}
    if first.get('device'):
        view['device'] = first['device']
    return view


def snapshot_view(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Nova's view of a Cinder snapshot (its size is the volume's, in GiB)."""
    return {'id': snapshot['id'], 'volumeId': snapshot['volume_id'],
            'status': snapshot['status'], 'size': snapshot['size'],
            'createdAt': snapshot.get('created_at'),
            'displayName': snapshot.get('name'),
            'displayDescription': snapshot.get('description')}


def _limited(items: Sequence[Mapping[str, Any]], req: wsgi.Request,
             view: View) -> list[dict[str, Any]]:
    """``offset`` and ``limit`` as Nova's old lists read them: a limit of 0 (or none)
    is ``[api] max_limit``, which also caps any other."""
    max_limit = CONF.api.max_limit
    offset = _integer(req.GET.get('offset', 0), 'offset')
    limit = min(_integer(req.GET.get('limit', 0), 'limit') or max_limit, max_limit)
    return [view(item) for item in items[offset:offset + limit]]


def _integer(value: str | int, name: str) -> int:
    """The schema let only digits through, but Python refuses to read more than 4300
    of them."""
    try:
        return int(value)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(explanation='%s is not an integer' % name) from exc


@contextlib.contextmanager
def _refusals() -> Iterator[None]:
    """Cinder's refusals in the API's terms: not found 404, refused (attached, busy, bad
    size) 400, over quota 403."""
    try:
        yield
    except exception.NotFound as exc:  # a volume, snapshot, type or zone
        raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
    except exception.Invalid as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    except exception.VolumeOverQuota as exc:
        raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc


def _cinder_id(value: str, missing: exception.NotFound) -> str:
    """``value``, an id Cinder could have (a UUID). Anything else is ``missing``
    without asking Cinder, so that it never becomes part of a Cinder URL's path."""
    if not cinder.configured() or not uuidutils.is_uuid_like(value):
        raise missing
    return value


@dataclasses.dataclass(frozen=True)
class _Kind:
    """One kind of Cinder resource as its proxy shows it."""

    key: str  # the body's key for one ('volume'); a list's is its plural
    rules: str  # the prefix of its policy rules' names after ``os_compute_api:os-volumes:``
    view: View
    missing: Callable[[str], exception.NotFound]
    get_all: Callable[[cinder.API, RequestContext], list[dict[str, Any]]]
    get: Callable[[cinder.API, RequestContext, str], dict[str, Any]]
    delete: Callable[[cinder.API, RequestContext, str], None]


_VOLUMES = _Kind('volume', '', volume_view,
                 lambda id: exception.VolumeNotFound(volume_id=id),
                 cinder.API.get_all, cinder.API.get, cinder.API.delete)
_SNAPSHOTS = _Kind('snapshot', 'snapshots:', snapshot_view,
                   lambda id: exception.SnapshotNotFound(snapshot_id=id),
                   cinder.API.get_all_snapshots, cinder.API.get_snapshot,
                   cinder.API.delete_snapshot)


class _CinderProxy(wsgi.Controller):
    """What both proxies do alike: list, show and delete their kind of Cinder resource,
    and check a create may be made."""

    kind: ClassVar[_Kind]

    def __init__(self, volume_api: cinder.API | None = None) -> None:
        super().__init__()
        self.volume_api = volume_api or cinder.API()

    def _authorize(self, req: wsgi.Request, action: str) -> RequestContext:
        context = req.context
        context.can(POLICY % (self.kind.rules + action), {'project_id': context.project_id})
        return context

    def _list(self, req: wsgi.Request, action: str) -> dict:
        context = self._authorize(req, action)
        items = self.kind.get_all(self.volume_api, context) if cinder.configured() else []
        return {self.kind.key + 's': _limited(items, req, self.kind.view)}

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        return self._list(req, 'list')

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.detail_query)
    def detail(self, req: wsgi.Request) -> dict:
        return self._list(req, 'detail')

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = self._authorize(req, 'show')
        with _refusals():
            item = self.kind.get(self.volume_api, context,
                                 _cinder_id(id, self.kind.missing(id)))
        return {self.kind.key: self.kind.view(item)}

    @wsgi.api_version('2.1', MAX_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = self._authorize(req, 'delete')
        with _refusals():
            self.kind.delete(self.volume_api, context, _cinder_id(id, self.kind.missing(id)))

    def _creating(self, req: wsgi.Request) -> RequestContext:
        """The caller's context, allowed to create and with a Cinder to create in."""
        context = self._authorize(req, 'create')
        if not cinder.configured():
            raise webob.exc.HTTPBadRequest(explanation=servers.NO_CINDER)
        return context


class VolumeController(_CinderProxy):
    """/os-volumes: the caller's volumes in Cinder."""

    kind = _VOLUMES

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, body: dict) -> wsgi.ResponseObject:
        context = self._creating(req)
        spec = body['volume']
        snapshot = None
        snapshot_id = spec.get('snapshot_id')
        with _refusals():
            if snapshot_id is not None:
                snapshot = self.volume_api.get_snapshot(context, _cinder_id(
                    snapshot_id, _SNAPSHOTS.missing(snapshot_id)))
            volume = self.volume_api.create(
                context, _integer(spec['size'], 'size'), spec.get('display_name'),
                spec.get('display_description'), snapshot=snapshot,
                volume_type=spec.get('volume_type'), metadata=spec.get('metadata'),
                availability_zone=spec.get('availability_zone'))
        location = '%s/%s' % (req.path_url, volume['id'])
        return wsgi.ResponseObject({'volume': volume_view(volume)},
                                   headers={'Location': location})


class SnapshotController(_CinderProxy):
    """/os-snapshots: the caller's volume snapshots in Cinder."""

    kind = _SNAPSHOTS

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.schema(schema.create_snapshot)
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = self._creating(req)
        spec = body['snapshot']
        force = strutils.bool_from_string(spec.get('force', False), strict=True)
        make = self.volume_api.create_snapshot_force if force else \
            self.volume_api.create_snapshot
        with _refusals():  # an attached volume without force is refused, say
            snapshot = make(context, spec['volume_id'], spec.get('display_name'),
                            spec.get('display_description'))
        return {'snapshot': snapshot_view(snapshot)}
