"""The os-aggregates API: host aggregates, their hosts, metadata and availability zone.

A host may be in several aggregates but in one availability zone only; the zone of a
host that runs instances cannot change through an aggregate update, as in Nova.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc
from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import aggregate_images as images_schema
from novalite.api.openstack.compute.schemas import aggregates as schema
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.availability_zones import COMPUTE_BINARY
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.objects import aggregate as agg_obj
from novalite.policies import aggregates as agg_policies
from novalite.scheduler import rpcapi as scheduler_rpcapi
from novalite.scheduler.client import report

if TYPE_CHECKING:
    import datetime

    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def _schedulers_forget(context: RequestContext, aggregate: objects.Aggregate,
                       deleted: bool = False) -> None:
    """Tell the schedulers their copy of the aggregates is out of date (fanout casts,
    as Nova's aggregate API does); a failure to tell them is logged, not the user's:
    they read the aggregates again within a minute anyway."""
    try:
        client = scheduler_rpcapi.SchedulerAPI()
        if deleted:
            client.delete_aggregate(context, aggregate)
        else:
            client.update_aggregates(context, [aggregate])
    except Exception:
        LOG.exception('Could not tell the schedulers that aggregate %s changed',
                      aggregate.id)


def _mirror_in_placement(context: RequestContext, aggregate: objects.Aggregate, host: str,
                         member: bool) -> None:
    """Put the host's compute node providers in (or out of) the aggregate's Placement
    aggregate, as Nova's aggregate API does. A failure is logged, not the user's:
    ``novalite-manage placement sync_aggregates`` puts it right later."""
    try:
        mapping = objects.HostMapping.get_by_host(context, host)
        with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
            nodes = objects.ComputeNodeList.get_all_by_host(cctxt, host)
        client = report.SchedulerReportClient()
        for node in nodes:
            if member:
                client.add_provider_to_aggregate(context, node.uuid, aggregate.uuid)
            else:
                client.remove_provider_from_aggregate(context, node.uuid, aggregate.uuid)
    except (exception.HostMappingNotFound, exception.PlacementAPIConnectFailure,
            exception.ResourceProviderError) as exc:
        LOG.warning('Could not %s the Placement aggregate %s for host %s: %s. Run '
                    '"novalite-manage placement sync_aggregates" once Placement answers.',
                    'add to' if member else 'remove from', aggregate.uuid, host, exc)


def _time(value: datetime.datetime | None) -> str | None:
    return value.replace(tzinfo=None).isoformat(timespec='microseconds') if value else None


def _int_id(aggregate_id: str) -> int:
    try:
        return int(aggregate_id)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid input received: id must be an integer') from exc


def _view(req: wsgi.Request, aggregate: objects.Aggregate, full: bool = True) -> dict:
    body: dict[str, object] = {
        'availability_zone': aggregate.availability_zone,
        'created_at': _time(aggregate.created_at),
        'deleted': False,
        'deleted_at': None,
        'id': aggregate.id,
        'name': aggregate.name,
        'updated_at': _time(aggregate.updated_at),
    }
    if full:
        body['hosts'] = list(aggregate.hosts)
        body['metadata'] = dict(aggregate.metadata)
    if avr.is_supported(req, '2.41'):
        body['uuid'] = aggregate.uuid
    return {'aggregate': body}


def _check_host(context: RequestContext, host: str) -> None:
    """The host runs a compute service in some cell (its host mapping's, else any).

    :raises ComputeHostNotFound: it does not
    """
    try:
        cells = [objects.HostMapping.get_by_host(context, host).cell_mapping]
    except exception.HostMappingNotFound:
        cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    for cell in cells:
        with nl_context.target_cell(context, cell) as cctxt:
            if objects.Service.get_by_host_and_binary(cctxt, host, COMPUTE_BINARY):
                return
    raise exception.ComputeHostNotFound(host=host)


def _hosts_have_instances(context: RequestContext, hosts: list[str]) -> bool:
    if not hosts:
        return False
    cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    results = nl_context.scatter_gather_cells(
        context, cells, 60,
        lambda cctxt: len(objects.InstanceList.get_by_filters(cctxt, {'host': hosts},
                                                              limit=1)))
    return any(r for r in results.values() if isinstance(r, int))


def _zone_problem(context: RequestContext, aggregate: objects.Aggregate, zone: str | None,
                  hosts: list[str],
                  check_instances: bool) -> str | None:
    """Why giving ``hosts`` of ``aggregate`` the zone ``zone`` is refused, or None."""
    if zone:
        conflicting = sorted({
            other.availability_zone for host in hosts
            for other in objects.AggregateList.get_by_host(context, host,
                                                           key=agg_obj.AZ_KEY)
            if other.id != aggregate.id and other.availability_zone is not None
            and other.availability_zone != zone})
        if conflicting:
            return ('One or more hosts already in availability zone(s) %s'
                    % ', '.join(conflicting))
    if check_instances and zone != aggregate.availability_zone and \
            _hosts_have_instances(context, hosts):
        return 'One or more hosts contain instances in this zone'
    return None


class AggregateController(wsgi.Controller):

    @staticmethod
    def _get(context: RequestContext, aggregate_id: str) -> objects.Aggregate:
        return objects.Aggregate.get_by_id(context, _int_id(aggregate_id))

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request) -> dict:
        req.context.can(agg_policies.BASE % 'index', {})
        return {'aggregates': [_view(req, a)['aggregate']
                               for a in objects.AggregateList.get_all(req.context)]}

    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        context.can(agg_policies.BASE % 'create', {})
        values = body['aggregate']
        aggregate = objects.Aggregate(context, name=values['name'].strip())
        if values.get('availability_zone'):
            aggregate.metadata = {agg_obj.AZ_KEY: values['availability_zone']}
        aggregate.create()
        _schedulers_forget(context, aggregate)
        return _view(req, aggregate, full=False)

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(agg_policies.BASE % 'show', {})
        return _view(req, self._get(req.context, id))

    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        context = req.context
        context.can(agg_policies.BASE % 'update', {})
        aggregate = self._get(context, id)
        values = body['aggregate']
        if 'availability_zone' in values:
            zone = values['availability_zone']
            problem = _zone_problem(context, aggregate, zone, aggregate.hosts, True)
            if problem:
                raise webob.exc.HTTPBadRequest(
                    explanation='Cannot update aggregate %s. Reason: %s.'
                                % (aggregate.id, problem))
        if 'name' in values:
            aggregate.name = values['name'].strip()
            aggregate.save()
        if 'availability_zone' in values:
            aggregate.update_metadata({agg_obj.AZ_KEY: values['availability_zone']})
        _schedulers_forget(context, aggregate)
        return _view(req, aggregate)

    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(agg_policies.BASE % 'delete', {})
        aggregate = self._get(context, id)
        if aggregate.hosts:
            raise webob.exc.HTTPBadRequest(
                explanation='Cannot remove aggregate %s. Reason: Host aggregate is not '
                            'empty.' % aggregate.id)
        aggregate.destroy()
        _schedulers_forget(context, aggregate, deleted=True)

    @wsgi.api_version('2.81')
    @wsgi.response(202)
    @validation.schema(images_schema.aggregate_images)
    def images(self, req: wsgi.Request, id: str, body: dict) -> None:
        """Have the aggregate's computes pre-cache images (a cast: 202 at once)."""
        context = req.context
        context.can(agg_policies.IMAGES, {})
        aggregate_id = _int_id(id)
        image_ids = [image['id'] for image in body['cache']]
        if len(set(image_ids)) != len(image_ids):
            raise webob.exc.HTTPBadRequest(explanation='Duplicate images in request')
        aggregate = objects.Aggregate.get_by_id(context, aggregate_id)
        try:
            self.compute_task_api.cache_images(context, aggregate, image_ids)
        except exception.NovaliteException as exc:
            if exc.code >= 500:
                raise
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    _compute_task_api: conductor_rpcapi.ComputeTaskAPI | None = None

    @property
    def compute_task_api(self) -> conductor_rpcapi.ComputeTaskAPI:
        # Made on first use: an RPC client needs rpc.init(), done after routing.
        if self._compute_task_api is None:
            self._compute_task_api = conductor_rpcapi.ComputeTaskAPI()
        return self._compute_task_api

    @validation.schema(schema.action)
    def action(self, req: wsgi.Request, id: str, body: dict) -> dict:
        name, values = next(iter(body.items()))
        context = req.context
        context.can(agg_policies.BASE % name, {})
        aggregate = self._get(context, id)
        return getattr(self, '_' + name)(req, aggregate, values)

    @staticmethod
    def _add_host(req: wsgi.Request, aggregate: objects.Aggregate, values: dict) -> dict:
        context = req.context
        host = values['host']
        _check_host(context, host)
        problem = _zone_problem(context, aggregate, aggregate.availability_zone, [host],
                                False)
        if problem:
            raise webob.exc.HTTPConflict(
                explanation='Cannot add host to aggregate %s. Reason: %s.'
                            % (aggregate.id, problem))
        aggregate.add_host(host)
        _schedulers_forget(context, aggregate)
        _mirror_in_placement(context, aggregate, host, True)
        return _view(req, aggregate)

    @staticmethod
    def _remove_host(req: wsgi.Request, aggregate: objects.Aggregate, values: dict) -> dict:
        host = values['host']
        _check_host(req.context, host)
        aggregate.delete_host(host)
        _schedulers_forget(req.context, aggregate)
        _mirror_in_placement(req.context, aggregate, host, False)
        return _view(req, aggregate)

    @staticmethod
    def _set_metadata(req: wsgi.Request, aggregate: objects.Aggregate, values: dict) -> dict:
        metadata = values['metadata']
        if agg_obj.AZ_KEY in metadata:
            problem = _zone_problem(req.context, aggregate, metadata[agg_obj.AZ_KEY],
                                    aggregate.hosts, True)
            if problem:
                raise webob.exc.HTTPBadRequest(
                    explanation='Cannot update metadata of aggregate %s. Reason: %s.'
                                % (aggregate.id, problem))
        aggregate.update_metadata(metadata)
        _schedulers_forget(req.context, aggregate)
        return _view(req, aggregate)
