"""The os-volumes and os-snapshots proxies (2.1 to 2.35, 404 from 2.36): Cinder's volumes
and snapshots through the Compute API, in the view Nova gave them (camelCase keys, the
old ``display_name`` spelling, one attachment at most).

Cinder decides who sees what (it scopes to the caller's project). Its refusals keep
their meaning: not found 404, over quota 403, refused (attached, busy, bad size) 400,
unreachable 503. Without Cinder configured there are no volumes: lists are empty,
show and delete 404, and create says why (400), as a boot from volume does.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

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


def _not_found(exc: exception.NotFound) -> webob.exc.HTTPNotFound:
    return webob.exc.HTTPNotFound(explanation=exc.format_message())


def _cinder_id(value: str, missing: exception.NotFound) -> str:
    """``value``, an id Cinder could have (a UUID). Anything else is ``missing``
    without asking Cinder, so that it never becomes part of a Cinder URL's path."""
    if not cinder.configured() or not uuidutils.is_uuid_like(value):
        raise missing
    return value


class VolumeController(wsgi.Controller):
    """/os-volumes: the caller's volumes in Cinder."""

    def __init__(self, volume_api: cinder.API | None = None) -> None:
        super().__init__()
        self.volume_api = volume_api or cinder.API()

    def _list(self, req: wsgi.Request, rule: str) -> dict:
        context = req.context
        context.can(POLICY % rule, {'project_id': context.project_id})
        volumes = self.volume_api.get_all(context) if cinder.configured() else []
        return {'volumes': _limited(volumes, req, volume_view)}

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
        context = req.context
        context.can(POLICY % 'show', {'project_id': context.project_id})
        try:
            volume = self.volume_api.get(
                context, _cinder_id(id, exception.VolumeNotFound(volume_id=id)))
        except exception.VolumeNotFound as exc:
            raise _not_found(exc) from exc
        return {'volume': volume_view(volume)}

    @wsgi.api_version('2.1', MAX_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(POLICY % 'delete', {'project_id': context.project_id})
        try:
            self.volume_api.delete(
                context, _cinder_id(id, exception.VolumeNotFound(volume_id=id)))
        except exception.VolumeNotFound as exc:
            raise _not_found(exc) from exc
        except exception.Invalid as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, body: dict) -> wsgi.ResponseObject:
        context = req.context
        context.can(POLICY % 'create', {'project_id': context.project_id})
        if not cinder.configured():
            raise webob.exc.HTTPBadRequest(explanation=servers.NO_CINDER)
        spec = body['volume']
        snapshot = None
        snapshot_id = spec.get('snapshot_id')
        if snapshot_id is not None:
            try:
                snapshot = self.volume_api.get_snapshot(context, _cinder_id(
                    snapshot_id, exception.SnapshotNotFound(snapshot_id=snapshot_id)))
            except exception.SnapshotNotFound as exc:
                raise _not_found(exc) from exc
        try:
            volume = self.volume_api.create(
                context, _integer(spec['size'], 'size'), spec.get('display_name'),
                spec.get('display_description'), snapshot=snapshot,
                volume_type=spec.get('volume_type'), metadata=spec.get('metadata'),
                availability_zone=spec.get('availability_zone'))
        except exception.Invalid as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        except exception.VolumeOverQuota as exc:
            raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
        except exception.NotFound as exc:  # a volume type or zone Cinder does not know
            raise _not_found(exc) from exc
        location = '%s/%s' % (req.path_url, volume['id'])
        return wsgi.ResponseObject({'volume': volume_view(volume)},
                                   headers={'Location': location})


class SnapshotController(wsgi.Controller):
    """/os-snapshots: the caller's volume snapshots in Cinder."""

    def __init__(self, volume_api: cinder.API | None = None) -> None:
        super().__init__()
        self.volume_api = volume_api or cinder.API()

    def _list(self, req: wsgi.Request, rule: str) -> dict:
        context = req.context
        context.can(POLICY % rule, {'project_id': context.project_id})
        snapshots = self.volume_api.get_all_snapshots(context) if cinder.configured() \
            else []
        return {'snapshots': _limited(snapshots, req, snapshot_view)}

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        return self._list(req, 'snapshots:list')

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.detail_query)
    def detail(self, req: wsgi.Request) -> dict:
        return self._list(req, 'snapshots:detail')

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        context.can(POLICY % 'snapshots:show', {'project_id': context.project_id})
        try:
            snapshot = self.volume_api.get_snapshot(
                context, _cinder_id(id, exception.SnapshotNotFound(snapshot_id=id)))
        except exception.SnapshotNotFound as exc:
            raise _not_found(exc) from exc
        return {'snapshot': snapshot_view(snapshot)}

    @wsgi.api_version('2.1', MAX_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(POLICY % 'snapshots:delete', {'project_id': context.project_id})
        try:
            self.volume_api.delete_snapshot(
                context, _cinder_id(id, exception.SnapshotNotFound(snapshot_id=id)))
        except exception.SnapshotNotFound as exc:
            raise _not_found(exc) from exc
        except exception.Invalid as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    @wsgi.api_version('2.1', MAX_VERSION)
    @validation.schema(schema.create_snapshot)
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        context.can(POLICY % 'snapshots:create', {'project_id': context.project_id})
        if not cinder.configured():
            raise webob.exc.HTTPBadRequest(explanation=servers.NO_CINDER)
        spec = body['snapshot']
        force = strutils.bool_from_string(spec.get('force', False), strict=True)
        make = self.volume_api.create_snapshot_force if force else \
            self.volume_api.create_snapshot
        try:
            snapshot = make(context, spec['volume_id'], spec.get('display_name'),
                            spec.get('display_description'))
        except exception.VolumeNotFound as exc:
            raise _not_found(exc) from exc
        except exception.Invalid as exc:  # an attached volume without force, say
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        except exception.VolumeOverQuota as exc:
            raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
        return {'snapshot': snapshot_view(snapshot)}
