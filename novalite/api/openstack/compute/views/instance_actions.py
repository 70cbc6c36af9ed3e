"""Views of instance actions and their events, per microversion."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common
from novalite.api.openstack.compute.views.servers import host_id

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import wsgi

_ACTION_KEYS = ('action', 'instance_uuid', 'request_id', 'user_id', 'project_id',
                'start_time', 'message')
_EVENT_KEYS = ('event', 'start_time', 'finish_time', 'result')


@dataclasses.dataclass
class EventFields:
    """Which parts of the events the caller sees (policy and microversion decide)."""

    events: bool
    traceback: bool
    host: bool
    host_id: bool
    details: bool


def _value(obj: objects.InstanceAction | objects.InstanceActionEvent, key: str) -> Any:
    value = getattr(obj, key) if obj.obj_attr_is_set(key) else None
    if key.endswith('_time') or key == 'updated_at':
        # Nova shows these with microseconds and no zone, as the database has them.
        return value.replace(tzinfo=None).isoformat(timespec='microseconds') \
            if value is not None else None
    return value


class ViewBuilder(common.ViewBuilder):
    _collection_name = 'os-instance-actions'

    @staticmethod
    def action(req: wsgi.Request, action: objects.InstanceAction) -> dict:
        body = {key: _value(action, key) for key in _ACTION_KEYS}
        if avr.is_supported(req, '2.58'):
            body['updated_at'] = _value(action, 'updated_at')
        return body

    def index(self, req: wsgi.Request, server_id: str, actions: list) -> dict:
        body: dict = {'instanceActions': [self.action(req, a) for a in actions]}
        if avr.is_supported(req, '2.58'):
            links = self._get_collection_links(
                req, actions, 'servers/%s/os-instance-actions' % server_id, 'request_id')
            if links:
                body['links'] = links
        return body

    def show(self, req: wsgi.Request, action: objects.InstanceAction,
             events: list[objects.InstanceActionEvent] | None, shown: EventFields,
             project_id: str | None) -> dict:
        body = self.action(req, action)
        if events is not None:
            body['events'] = [self.event(e, shown, action.project_id or project_id)
                              for e in events]
        return {'instanceAction': body}

    @staticmethod
    def event(event: objects.InstanceActionEvent, shown: EventFields,
              project_id: str | None) -> dict:
        body = {key: _value(event, key) for key in _EVENT_KEYS}
        if shown.traceback:
            body['traceback'] = event.traceback
        if shown.host:
            body['host'] = event.host
        if shown.host_id:
            body['hostId'] = host_id(project_id, event.host)
        if shown.details:
            body['details'] = event.details
        return body
