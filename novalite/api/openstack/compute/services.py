"""The os-services API: the services of every cell, and enabling or disabling computes.

Services live in the cell databases, so listing gathers every cell (cell0 has none) and
an update or delete looks the service up in each (by uuid from 2.53, by database id
before). ``PUT /os-services/{service_id}`` is the 2.53 form; the older
``/os-services/enable`` style actions are not implemented.

Deleting a compute service also deletes its nodes, their resource providers in
Placement and the host mapping, and takes the host out of its aggregates; it is refused
(409) while the host has instances, unfinished migrations, or allocations in Placement.
"""
from __future__ import annotations

from typing import Any

import webob.exc
from oslo_utils import strutils, uuidutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import services as schema
from novalite.api.openstack.compute.views import services as services_view
from novalite.compute import lookups
from novalite.policies import services as sv_policies
from novalite.scheduler.client import report
from novalite.servicegroup import api as servicegroup

# Seconds to wait for a cell's database before listing without it.
CELL_TIMEOUT = 60


def _cells(context: Any) -> list:
    return [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]


def _gather(context: Any, fn: Any) -> dict:
    """{cell uuid: result of ``fn(cell_context)``}, cells that failed left out."""
    results = nl_context.scatter_gather_cells(context, _cells(context), CELL_TIMEOUT, fn)
    return {uuid: r for uuid, r in results.items()
            if r is not nl_context.did_not_respond_sentinel and not isinstance(r, Exception)}


class ServiceController(wsgi.Controller):

    def __init__(self, servicegroup_api: Any = None, reportclient: Any = None) -> None:
        super().__init__()
        self._view_builder = services_view.ViewBuilder(servicegroup_api or servicegroup.API())
        self._reportclient = reportclient

    @property
    def reportclient(self) -> Any:
        # Made on first use: tests and keystone-less set-ups configure it late.
        if self._reportclient is None:
            self._reportclient = report.SchedulerReportClient()
        return self._reportclient

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(sv_policies.BASE % 'list', {})
        host = req.GET.get('host')
        binary = req.GET.get('binary')
        services = []
        for cell_services in _gather(context, objects.ServiceList.get_all).values():
            services += [s for s in cell_services
                         if (host is None or s.host == host)
                         and (binary is None or s.binary == binary)]
        return self._view_builder.index(req, services)

    @wsgi.api_version('2.53')
    @validation.schema(schema.update_v253, '2.53')
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        context = req.context
        context.can(sv_policies.BASE % 'update', {})
        if not uuidutils.is_uuid_like(id):
            raise webob.exc.HTTPBadRequest(explanation='Invalid uuid %s' % id)
        status = body.get('status')
        if 'disabled_reason' in body and status != 'disabled':
            raise webob.exc.HTTPBadRequest(
                explanation="Specifying 'disabled_reason' with status '%s' is invalid."
                            % (status or 'enabled'))
        service = self._find(context, id)
        if service.binary != services_view.COMPUTE_BINARY:
            raise webob.exc.HTTPBadRequest(
                explanation='Updating a %s service is not supported. Only %s services '
                            'can be updated.' % (service.binary, services_view.COMPUTE_BINARY))
        if status == 'enabled':
            service.disabled = False
            service.disabled_reason = None
        elif status == 'disabled':
            service.disabled = True
            service.disabled_reason = body.get('disabled_reason')
        if 'forced_down' in body:
            service.forced_down = strutils.bool_from_string(body['forced_down'], strict=True)
        service.save()
        lookups.forget()  # host_status answers at once, in this process
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
        if service.binary == services_view.COMPUTE_BINARY:
            self._delete_compute_parts(context, service)
        service.destroy()
        lookups.forget()

    def _delete_compute_parts(self, context: Any, service: Any) -> None:
        """Check that nothing lives on the host any more, then remove its providers,
        aggregate memberships and host mapping (the service row goes last)."""
        host = service.host
        if objects.InstanceList.get_by_host(service._context, host):
            raise webob.exc.HTTPConflict(
                explanation='Unable to delete compute service that is hosting instances. '
                            'Migrate or delete the instances first.')
        nodes = objects.ComputeNodeList.get_all_by_host(service._context, host)
        for node in nodes:
            if objects.MigrationList.get_in_progress_by_host_and_node(
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
    def _find_by_id(context: Any, service_id: int) -> Any:
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
    def _find(context: Any, service_uuid: str) -> Any:
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
