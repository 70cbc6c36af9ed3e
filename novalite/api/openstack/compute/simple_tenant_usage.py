"""The os-simple-tenant-usage API: server hours per project over a time window.

Each server that ran in the window is charged for the hours it ran in it (from its
launch or the window's start, to its termination or the window's end, never past now);
vCPUs, memory and disk are charged per hour. ``detailed=1`` lists the servers. From 2.40
the servers are paged (the marker is a server uuid) with a ``next`` link.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import timeutils

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import simple_tenant_usage as schema
from novalite.policies import simple_tenant_usage as stu_policies

if TYPE_CHECKING:
    from novalite import objects

COLLECTION = 'os-simple-tenant-usage'
_FORMATS = ('%Y-%m-%dT%H:%M:%S', '%Y-%m-%dT%H:%M:%S.%f', '%Y-%m-%d %H:%M:%S.%f')


def _time(value: datetime.datetime | None) -> str | None:
    """Nova renders these times naive, with microseconds."""
    if value is None:
        return None
    return timeutils.normalize_time(value).isoformat(timespec='microseconds')


def _parse(value: str | None, now: datetime.datetime) -> datetime.datetime:
    """A window bound: one of Nova's three formats, taken as UTC; now when absent."""
    if not value:
        return now
    for fmt in _FORMATS:
        try:
            return datetime.datetime.strptime(value, fmt).replace(tzinfo=datetime.UTC)
        except ValueError:
            continue
    raise webob.exc.HTTPBadRequest(explanation='Invalid input received: Datetime is in '
                                               'invalid format')


def _window(req: wsgi.Request) -> tuple[datetime.datetime, datetime.datetime]:
    now = timeutils.utcnow(with_timezone=True)
    start = _parse(req.GET.get('start'), now)
    stop = _parse(req.GET.get('end'), now)
    # Absent bounds both mean "now" (Nova reads the clock twice, so they differ).
    if start > stop or (start == stop and ('start' in req.GET or 'end' in req.GET)):
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid start time. The start time cannot occur after the end '
                        'time.')
    return start, min(stop, now)


def hours_for(instance: objects.Instance, start: datetime.datetime,
              stop: datetime.datetime) -> float:
    """Hours ``instance`` ran within [start, stop]."""
    launched, terminated = instance.launched_at, instance.terminated_at
    if launched is None or launched > stop or (terminated and terminated < start):
        return 0
    delta = min(stop, terminated) - max(launched, start) if terminated else \
        stop - max(launched, start)
    # Nova counts microseconds in tenths of seconds; clients compare against Nova.
    seconds = delta.days * 86400 + delta.seconds + delta.microseconds / 100000.0
    return seconds / 3600.0


def _server_usage(instance: objects.Instance, start: datetime.datetime, stop: datetime.datetime,
                  now: datetime.datetime) -> dict:
    flavor = instance.flavor if instance.obj_attr_is_set('flavor') else None
    ended = instance.terminated_at
    # The window's instances were all launched (instances_in_window skips the others).
    launched = instance.launched_at
    uptime = (ended or now) - launched if launched is not None else datetime.timedelta(0)
    return {
        'hours': hours_for(instance, start, stop),
        'flavor': flavor.name if flavor is not None else '',
        'instance_id': instance.uuid,
        'name': instance.display_name,
        'memory_mb': instance.memory_mb,
        'local_gb': (instance.root_gb or 0) + (instance.ephemeral_gb or 0),
        'vcpus': instance.vcpus,
        'tenant_id': instance.project_id,
        'started_at': _time(instance.launched_at),
        'ended_at': _time(ended),
        'state': 'terminated' if ended else instance.vm_state,
        'uptime': uptime.days * 86400 + uptime.seconds,
    }


def tenant_usages(instances: list[objects.Instance], start: datetime.datetime,
                  stop: datetime.datetime,
                  detailed: bool) -> list[dict]:
    """One summary per project, in the order the projects first appear."""
    now = timeutils.utcnow(with_timezone=True)
    summaries: dict[str, dict] = {}
    for instance in instances:
        info = _server_usage(instance, start, stop, now)
        summary = summaries.get(info['tenant_id'])
        if summary is None:
            summary = summaries[info['tenant_id']] = {
                'tenant_id': info['tenant_id'], 'total_local_gb_usage': 0,
                'total_vcpus_usage': 0, 'total_memory_mb_usage': 0, 'total_hours': 0,
                'start': _time(start), 'stop': _time(stop)}
            if detailed:
                summary['server_usages'] = []
        summary['total_local_gb_usage'] += info['local_gb'] * info['hours']
        summary['total_vcpus_usage'] += info['vcpus'] * info['hours']
        summary['total_memory_mb_usage'] += info['memory_mb'] * info['hours']
        summary['total_hours'] += info['hours']
        if detailed:
            summary['server_usages'].append(info)
    return list(summaries.values())


class SimpleTenantUsageController(common.ComputeAPIUser, wsgi.Controller):

    def _instances(self, req: wsgi.Request, start: datetime.datetime, stop: datetime.datetime,
                   project_id: str | None) -> tuple[list, bool]:
        """The instances of the window (one page from 2.40) and whether it is paged."""
        paged = avr.is_supported(req, '2.40')
        limit, marker = common.get_limit_and_marker(req) if paged else (None, None)
        try:
            return self.compute_api.get_instances_in_window(
                req.context, start, stop, project_id, limit, marker), paged
        except exception.MarkerNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    @staticmethod
    def _links(req: wsgi.Request, instances: list, collection: str) -> list[dict]:
        return common.ViewBuilder()._get_collection_links(req, instances, collection, 'uuid')

    @validation.query_schema(schema.index_query, '2.1', '2.39')
    @validation.query_schema(schema.index_query_v240, '2.40', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        req.context.can(stu_policies.BASE % 'list', {})
        start, stop = _window(req)
        detailed = req.GET.get('detailed', '0') == '1'
        instances, paged = self._instances(req, start, stop, None)
        body: dict = {'tenant_usages': tenant_usages(instances, start, stop, detailed)}
        links = self._links(req, instances, COLLECTION) if paged else []
        if links:
            body['tenant_usages_links'] = links
        return body

    @validation.query_schema(schema.show_query, '2.1', '2.39')
    @validation.query_schema(schema.show_query_v240, '2.40', '2.74')
    @validation.query_schema(schema.show_query_v275, '2.75')
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(stu_policies.BASE % 'show', {'project_id': id})
        start, stop = _window(req)
        instances, paged = self._instances(req, start, stop, id)
        usages = tenant_usages(instances, start, stop, detailed=True)
        body: dict = {'tenant_usage': usages[0] if usages else {}}
        links = self._links(req, instances, '%s/%s' % (COLLECTION, id)) if paged else []
        if links:
            body['tenant_usage_links'] = links
        return body
