"""POST /os-server-external-events: other services tell compute what happened to a
server (a port plugged, a volume extended, a node powered off).

Each event gets its own code: 200 accepted, 404 unknown server, 422 server on no host,
400 event missing the tag it needs. The answer is 200 when all are accepted, 207 when
some are not, and 404 when none is. Accepted events are cast to the servers' hosts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc
from oslo_log import log as logging

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import server_external_events as schema
from novalite.policies import server_external_events as see_policies

if TYPE_CHECKING:
    from novalite import objects

LOG = logging.getLogger(__name__)

# Events that name a resource in their tag and mean nothing without it.
TAG_REQUIRED = ('volume-extended', 'volume-reimaged')
POWER_TAGS = ('POWER_ON', 'POWER_OFF')


def _refusal(event: dict, instance: objects.Instance | None) -> int | None:
    """The code of an event that cannot be delivered, None when it can."""
    if instance is None:
        return 404
    if event['name'] in TAG_REQUIRED and event.get('tag') is None:
        return 400
    if event['name'] == 'power-update' and event.get('tag') not in POWER_TAGS:
        return 400
    if not instance.host:
        return 422
    return None


class ServerExternalEventsController(common.ComputeAPIUser, wsgi.Controller):

    @validation.schema(schema.create, '2.1', '2.50')
    @validation.schema(schema.create_v251, '2.51', '2.75')
    @validation.schema(schema.create_v276, '2.76', '2.81')
    @validation.schema(schema.create_v282, '2.82', '2.92')
    @validation.schema(schema.create_v293, '2.93')
    def create(self, req: wsgi.Request, body: dict) -> wsgi.ResponseObject:
        context = req.context
        context.can(see_policies.BASE % 'create', {})
        events = body['events']
        instances = self.compute_api.get_instances_for_events(
            context, {e['server_uuid'] for e in events})
        accepted: list[dict] = []
        code = 200
        for event in events:
            event.setdefault('status', 'completed')
            instance = instances.get(event['server_uuid'])
            refusal = _refusal(event, instance)
            if refusal is not None or instance is None:
                LOG.debug('Dropping event %s:%s of server %s (%d)', event['name'],
                          event.get('tag'), event['server_uuid'], refusal)
                event.update(status='failed', code=refusal)
                code = 207
                continue
            LOG.info('Creating event %s:%s for server %s on %s', event['name'],
                     event.get('tag'), event['server_uuid'], instance.host)
            event['code'] = 200
            accepted.append(event)
        if not accepted:
            raise webob.exc.HTTPNotFound(explanation='No instances found for any event')
        self.compute_api.external_instance_event(
            context, [instances[e['server_uuid']] for e in accepted],
            [{'name': e['name'], 'tag': e.get('tag'), 'status': e['status'],
              'server_uuid': e['server_uuid']} for e in accepted])
        return wsgi.ResponseObject({'events': events}, code=code)
