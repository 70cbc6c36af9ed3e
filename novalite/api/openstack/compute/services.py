"""The os-services API: the services of every cell, and enabling or disabling computes.

Services live in the cell databases, so listing gathers every cell (cell0 has none) and
an update or delete looks the service up in each (by uuid from 2.53, by database id
before). Before 2.53 an update is an action named in the path
(``PUT /os-services/disable`` with the host and binary in the body); from 2.53 it is
``PUT /os-services/{service_id}``. Binaries are shown and matched by Nova's names
(``binaries``): ``nova-compute`` finds the ``novalite-compute`` services.

Deleting a compute service also deletes its nodes, their resource providers in
Placement and the host mapping, and takes the host out of its aggregates; it is refused
(409) while the host has instances, unfinished migrations, or allocations in Placement.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc
from oslo_log import log as logging
from oslo_utils import strutils, uuidutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import binaries
from novalite.api.openstack.compute.schemas import services as schema
from novalite.api.openstack.compute.views import services as services_view
from novalite.compute import host_actions, lookups
from novalite.context import RequestContext
from novalite.objects.service import Service
from novalite.policies import services as sv_policies
from novalite.scheduler.client import report
from novalite.servicegroup import api as servicegroup

if TYPE_CHECKING:
    from collections.abc import Callable

LOG = logging.getLogger(__name__)

# Seconds to wait for a cell's database before listing without it.
CELL_TIMEOUT = 60


def _cells(context: RequestContext) -> list:
    return [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]


def _gather(context: RequestContext, fn: Callable[[RequestContext], object]) -> dict:
    """{cell uuid: result of ``fn(cell_context)``}, cells that failed left out."""
    results = nl_context.scatter_gather_cells(context, _cells(context), CELL_TIMEOUT, fn)
    return {uuid: r for uuid, r in results.items()
            if r is not nl_context.did_not_respond_sentinel and not isinstance(r, Exception)}


class ServiceController(wsgi.Controller[services_view.ViewBuilder]):

    def __init__(self, servicegroup_api: servicegroup.API | None = None,
                 reportclient: report.SchedulerReportClient | None = None) -> None:
        super().__init__()
        group = servicegroup_api or servicegroup.API()
        self._view_builder = services_view.ViewBuilder(group)
        self._reportclient = reportclient
        self._host_api = host_actions.HostAPI(group)

    @property
    def reportclient(self) -> report.SchedulerReportClient:
        # Made on first use: tests and keystone-less set-ups configure it late.
        if self._reportclient is None:
            self._reportclient = report.SchedulerReportClient()
        return self._reportclient

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(sv_policies.BASE % 'list', {})
        # An empty filter is no filter, as in Nova.
        host = req.GET.get('host')
        binary = req.GET.get('binary')
        recorded = binaries.to_recorded(binary) if binary else None
        services = []
        for cell_services in _gather(context, objects.ServiceList.get_all).values():
            services += [s for s in cell_services
                         if (not host or s.host == host)
                         and (recorded is None or s.binary == recorded)]
        return self._view_builder.index(req, services)

    @validation.schema(schema.update, '2.1', '2.10')
    @validation.schema(schema.update_v211, '2.11', '2.52')
    @validation.schema(schema.update_v253, '2.53')
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        """An action on a host's binary before 2.53, the service ``id``'s fields from."""
        if avr.is_supported(req, '2.53'):
            return self._update_v253(req, id, body)
        context = req.context
        context.can(sv_policies.BASE % 'update', {})
        actions = {'enable': self._enable, 'disable': self._disable,
                   'disable-log-reason': self._disable_log_reason}
        if avr.is_supported(req, '2.11'):
            actions['force-down'] = self._forced_down
        if id not in actions:
            raise webob.exc.HTTPNotFound(explanation='Unknown action')
        return actions[id](context, body)

    def _enable(self, context: RequestContext, body: dict) -> dict:
        return self._set_status(context, body, 'enabled', None)

    def _disable(self, context: RequestContext, body: dict) -> dict:
        return self._set_status(context, body, 'disabled', None)

    def _disable_log_reason(self, context: RequestContext, body: dict) -> dict:
        if 'disabled_reason' not in body:
            raise webob.exc.HTTPBadRequest(explanation='Missing disabled reason field')
        return self._set_status(context, body, 'disabled', body['disabled_reason'])

    def _set_status(self, context: RequestContext, body: dict, status: str,
                    reason: str | None) -> dict:
        service = self._find_by_host_and_binary(context, body['host'], body['binary'])
        service.disabled = status == 'disabled'
        service.disabled_reason = reason
        service.save()
        lookups.forget()
        self._sync_status_trait(context, service)
        # Echoes the body's binary, as Nova does: a client finds the name it sent.
        answer = {'host': body['host'], 'binary': body['binary'], 'status': status}
        if reason:
            answer['disabled_reason'] = reason
        return {'service': answer}

    def _forced_down(self, context: RequestContext, body: dict) -> dict:
        if 'forced_down' not in body:
            raise webob.exc.HTTPBadRequest(explanation='Missing forced_down field')
        forced_down = strutils.bool_from_string(body['forced_down'])
        service = self._find_by_host_and_binary(context, body['host'], body['binary'])
        if not forced_down:
            self._check_for_evacuations(service)
        service.forced_down = forced_down
        service.save()
        lookups.forget()
        return {'service': {'host': body['host'], 'binary': body['binary'],
                            'forced_down': forced_down}}

    def _sync_status_trait(self, context: RequestContext, service: Service) -> None:
        """Have the compute host tag (or untag) its providers with
        COMPUTE_STATUS_DISABLED now, as Nova's API does; a host that is down or does
        not answer does it at its next periodic run."""
        if not binaries.is_compute(service.binary) or service.host is None:
            return
        try:
            self._host_api.set_host_enabled(context, service.host, not service.disabled)
        except (exception.ComputeServiceUnavailable, exception.ComputeHostNotFound,
                exception.HostMappingNotFound) as exc:
            LOG.info('The status trait of %s follows at its next periodic run: %s',
                     service.host, exc.format_message())

    @staticmethod
    def _find_by_host_and_binary(context: RequestContext, host: str,
                                 binary: str) -> objects.Service:
        """The compute service of ``host``, its context aimed at the host's cell.

        :raises HTTPBadRequest: ``binary`` is not the compute's
        :raises HTTPNotFound: the host is in no cell, or has no such service
        """
        if not binaries.is_compute(binary):
            raise webob.exc.HTTPBadRequest(
                explanation='Updating a %s service is not supported. Only %s services '
                            'can be updated.' % (binary, binaries.COMPUTE))
        try:
            mapping = objects.HostMapping.get_by_host(context, host)
        except exception.HostMappingNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
            service = objects.Service.get_by_host_and_binary(
                cctxt, host, binaries.to_recorded(binary))
        if service is None:
            raise webob.exc.HTTPNotFound(
                explanation='Could not find binary %s on host %s.' % (binary, host))
        return service

    @staticmethod
    def _check_for_evacuations(service: objects.Service) -> None:
        """Refuse to force a host up while evacuations from it are still ``done``:
        its compute has not started since and would find the evacuated guests."""
        filters = {'source_compute': service.host, 'status': 'done',
                   'migration_type': 'evacuation'}
        if objects.MigrationList.get_by_filters(service._context, filters):
            raise webob.exc.HTTPBadRequest(
                explanation='Unable to force up host %s as `done` evacuation migration '
                            'records remain associated with the host. Ensure the compute '
                            'service has been restarted, allowing these records to move '
                            'to `completed` before retrying this request.' % service.host)

    def _update_v253(self, req: wsgi.Request, id: str, body: dict) -> dict:
        context = req.context
        if not uuidutils.is_uuid_like(id):
            raise webob.exc.HTTPBadRequest(explanation='Invalid uuid %s' % id)
        context.can(sv_policies.BASE % 'update', {})
        service = self._find(context, id)
        if not binaries.is_compute(service.binary):
            raise webob.exc.HTTPBadRequest(
                explanation='Updating a %s service is not supported. Only %s services '
                            'can be updated.' % (binaries.to_api(service.binary),
                                                 binaries.COMPUTE))
        status = body.get('status')
        if status == 'enabled':
            if body.get('disabled_reason'):
                raise webob.exc.HTTPBadRequest(
                    explanation="Specifying 'disabled_reason' with status 'enabled' is "
                                "invalid.")
            service.disabled = False
            service.disabled_reason = None
        elif status == 'disabled':
            service.disabled = True
            service.disabled_reason = body.get('disabled_reason')
        if 'forced_down' in body:
            service.forced_down = strutils.bool_from_string(body['forced_down'], strict=True)
            if not service.forced_down:
                self._check_for_evacuations(service)
        if not service.obj_what_changed():
            raise webob.exc.HTTPBadRequest(
                explanation="No updates were requested. Fields 'status' or 'forced_down' "
                            "should be specified.")
        status_changed = 'disabled' in service.obj_what_changed()
        service.save()
        lookups.forget()  # host_status answers at once, in this process
        if status_changed:
            self._sync_status_trait(context, service)
        return self._view_builder.show(req, service)

    @validation.no_body
    @wsgi.response(204)
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(sv_policies.BASE % 'delete', {})
        if avr.is_supported(req, '2.53'):
            if not uuidutils.is_uuid_like(id):
                raise webob.exc.HTTPBadRequest(explanation='Invalid uuid %s' % id)
            service = self._find(context, id)
        else:
            try:
                service_id = int(id)
            except ValueError as exc:
                raise webob.exc.HTTPBadRequest(
                    explanation='Invalid input received: id must be an integer') from exc
            service = self._find_by_id(context, service_id)
        if binaries.is_compute(service.binary):
            self._delete_compute_parts(context, service)
        service.destroy()
        lookups.forget()

    def _delete_compute_parts(self, context: RequestContext, service: objects.Service) -> None:
        """Check that nothing lives on the host any more, then remove its providers,
        aggregate memberships and host mapping (the service row goes last)."""
        host = service.host
        if host is None:
            return  # nothing can live on, or be mapped to, no host
        if objects.InstanceList.get_by_host(service._context, host):
            raise webob.exc.HTTPConflict(
                explanation='Unable to delete compute service that is hosting instances. '
                            'Migrate or delete the instances first.')
        nodes = objects.ComputeNodeList.get_all_by_host(service._context, host)
        for node in nodes:
            # A node without a name is in no migration's source or destination.
            if node.hypervisor_hostname is not None and \
                    objects.MigrationList.get_in_progress_by_host_and_node(
                        service._context, host, node.hypervisor_hostname):
                raise webob.exc.HTTPConflict(
                    explanation='Unable to delete compute service that has in-progress '
                                'migrations. Complete the migrations or delete the '
                                'instances first.')
        for node in nodes:
            try:
                self.reportclient.delete_resource_provider(context, node.uuid)
            except exception.ResourceProviderInUse as exc:
                raise webob.exc.HTTPConflict(
                    explanation='Unable to delete compute service: %s'
                                % exc.format_message()) from exc
        for aggregate in objects.AggregateList.get_by_host(context, host):
            aggregate.delete_host(host)
        try:
            objects.HostMapping.get_by_host(context, host).destroy()
        except exception.HostMappingNotFound:
            pass  # a host never discovered into a cell has no mapping

    @staticmethod
    def _find_by_id(context: RequestContext, service_id: int) -> objects.Service:
        """The service with this database id; ids repeat across cells, so one that
        names services in two cells is refused.

        :raises HTTPNotFound: no cell has it
        :raises HTTPBadRequest: several cells have it
        """
        found = []
        for cell in _cells(context):
            with nl_context.target_cell(context, cell) as cctxt:
                try:
                    found.append(objects.Service.get_by_id(cctxt, service_id))
                except exception.ServiceNotFound:
                    continue
        if len(found) > 1:
            raise webob.exc.HTTPBadRequest(
                explanation='Service id %s refers to multiple services.' % service_id)
        if not found:
            raise webob.exc.HTTPNotFound(explanation='Service %s not found.' % service_id)
        return found[0]

    @staticmethod
    def _find(context: RequestContext, service_uuid: str) -> objects.Service:
        """The service with this uuid, with its context aimed at its cell.

        :raises HTTPNotFound: no cell has it
        """
        for cell in _cells(context):
            with nl_context.target_cell(context, cell) as cctxt:
                for service in objects.ServiceList.get_all(cctxt):
                    if service.uuid == service_uuid:
                        return service
        raise webob.exc.HTTPNotFound(
            explanation='Service with uuid %s could not be found.' % service_uuid)
