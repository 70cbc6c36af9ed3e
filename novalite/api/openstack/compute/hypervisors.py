"""The os-hypervisors API: the compute nodes of every cell, their service and servers.

Ids are the nodes' database ids until 2.52 and their uuids from 2.53 (the same holds
for the embedded service). 2.53 replaces the ``/search`` and ``/servers`` sub-resources
with the ``hypervisor_hostname_pattern`` and ``with_servers`` query parameters; 2.88
drops the usage fields, ``/statistics`` and ``/uptime`` (Placement is where usage is) and
shows the host's uptime in every detailed view instead (asked of the host, None when it
cannot tell).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import oslo_messaging as messaging
import webob.exc
from oslo_utils import strutils, uuidutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query
from novalite.api.openstack.compute.schemas import hypervisors as schema
from novalite.api.openstack.compute.views import hypervisors as view
from novalite.availability_zones import COMPUTE_BINARY
from novalite.compute import rpcapi as compute_rpcapi
from novalite.policies import hypervisors as hv_policies
from novalite.servicegroup import api as servicegroup

if TYPE_CHECKING:
    from novalite.context import RequestContext

# Seconds to wait for one cell's database before listing without it.
CELL_TIMEOUT = 60


class Node(NamedTuple):
    """A compute node with its compute service and the cell both live in."""
    node: objects.ComputeNode
    service: objects.Service
    cell: objects.CellMapping


def _nodes_of_cell(cctxt: RequestContext) -> list[tuple[objects.ComputeNode, objects.Service]]:
    services = {s.host: s for s in objects.ServiceList.get_by_binary(cctxt, COMPUTE_BINARY)}
    nodes = sorted(objects.ComputeNodeList.get_all(cctxt), key=lambda n: n.id)
    return [(n, services[n.host]) for n in nodes if n.host in services]


def _not_found(id: str) -> webob.exc.HTTPNotFound:
    return webob.exc.HTTPNotFound(
        explanation="Hypervisor with ID '%s' could not be found." % id)


def _no_match(pattern: str) -> webob.exc.HTTPNotFound:
    return webob.exc.HTTPNotFound(
        explanation="No hypervisor matching '%s' could be found." % pattern)


class HypervisorsController(wsgi.Controller):

    def __init__(self, servicegroup_api: servicegroup.API | None = None,
                 compute_rpcapi_: compute_rpcapi.ComputeAPI | None = None) -> None:
        super().__init__()
        self._servicegroup = servicegroup_api or servicegroup.API()
        self._compute_rpcapi = compute_rpcapi_

    def _host_uptime(self, context: RequestContext, item: Node) -> str:
        """The host's uptime line.

        :raises ComputeServiceUnavailable: its compute service is down
        :raises NotImplementedError: its driver cannot tell
        """
        host = item.node.host
        if host is None or not self._servicegroup.service_is_up(item.service):
            raise exception.ComputeServiceUnavailable(host=host)
        if self._compute_rpcapi is None:
            self._compute_rpcapi = compute_rpcapi.ComputeAPI()
        with nl_context.target_cell(context, item.cell) as cctxt:
            return self._compute_rpcapi.get_host_uptime(cctxt, host)

    def _uptime_or_none(self, req: wsgi.Request, item: Node) -> str | None:
        try:
            return self._host_uptime(req.context, item)
        except (NotImplementedError, exception.ComputeServiceUnavailable,
                messaging.MessagingTimeout):
            return None

    # -- reading the cells ---------------------------------------------------------

    @staticmethod
    def _all(context: RequestContext) -> list[Node]:
        """Every node of every cell, cells in mapping order, nodes by id."""
        cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
        results = nl_context.scatter_gather_cells(context, cells, CELL_TIMEOUT,
                                                  _nodes_of_cell)
        found = []
        for cell in cells:
            result = results.get(cell.uuid)
            if isinstance(result, list):
                found += [Node(n, s, cell) for n, s in result]
        return found

    @staticmethod
    def _servers(context: RequestContext, item: Node) -> list:
        with nl_context.target_cell(context, item.cell) as cctxt:
            instances = objects.InstanceList.get_by_filters(cctxt, {'host': item.node.host})
        return [i for i in instances if i.node in (None, item.node.hypervisor_hostname)]

    def _view(self, req: wsgi.Request, item: Node, detail: bool = False,
              with_servers: bool = False) -> dict:
        servers = self._servers(req.context, item) if with_servers else None
        uptime = self._uptime_or_none(req, item) if detail and avr.is_supported(
            req, '2.88') else None
        return view.hypervisor(req, item.node, item.service,
                               self._servicegroup.service_is_up(item.service),
                               detail=detail, servers=servers, with_servers=with_servers,
                               uptime=uptime)

    # -- lists ---------------------------------------------------------------------

    @validation.query_schema(empty_query, '2.1', '2.32')
    @validation.query_schema(schema.list_query_v233, '2.33', '2.52')
    @validation.query_schema(schema.list_query_v253, '2.53')
    def index(self, req: wsgi.Request) -> dict:
        req.context.can(hv_policies.BASE % 'list', {})
        return self._list(req, detail=False)

    @validation.query_schema(empty_query, '2.1', '2.32')
    @validation.query_schema(schema.list_query_v233, '2.33', '2.52')
    @validation.query_schema(schema.list_query_v253, '2.53')
    def detail(self, req: wsgi.Request) -> dict:
        req.context.can(hv_policies.BASE % 'list-detail', {})
        return self._list(req, detail=True)

    def _list(self, req: wsgi.Request, detail: bool) -> dict:
        context = req.context
        items = self._all(context)
        paged = avr.is_supported(req, '2.33')
        with_servers = avr.is_supported(req, '2.53') and strutils.bool_from_string(
            req.GET.get('with_servers', False), strict=True)
        pattern = req.GET.get('hypervisor_hostname_pattern') \
            if avr.is_supported(req, '2.53') else None
        if pattern is not None:
            if 'limit' in req.GET or 'marker' in req.GET:
                raise webob.exc.HTTPBadRequest(
                    explanation='Paging over hypervisors with the '
                                'hypervisor_hostname_pattern query parameter is not '
                                'supported.')
            items = [i for i in items if pattern in (i.node.hypervisor_hostname or '')]
            if not items:
                raise _no_match(pattern)
        elif paged:
            items = self._page(req, items)
        hypervisors = [self._view(req, i, detail, with_servers) for i in items]
        body: dict = {'hypervisors': hypervisors}
        if paged and pattern is None:
            links = common.ViewBuilder()._get_collection_links(
                req, hypervisors, 'os-hypervisors' + ('/detail' if detail else ''), 'id')
            if links:
                body['hypervisors_links'] = links
        return body

    @staticmethod
    def _page(req: wsgi.Request, items: list[Node]) -> list[Node]:
        limit, marker = common.get_limit_and_marker(req)
        if marker is not None:
            key = 'uuid' if avr.is_supported(req, '2.53') else 'id'
            ids = [str(getattr(i.node, key)) for i in items]
            if marker not in ids:
                raise webob.exc.HTTPBadRequest(explanation='marker [%s] not found' % marker)
            items = items[ids.index(marker) + 1:]
        return items[:limit]

    # -- one -----------------------------------------------------------------------

    def _find(self, req: wsgi.Request, id: str) -> Node:
        if avr.is_supported(req, '2.53'):
            if not uuidutils.is_uuid_like(id):
                raise webob.exc.HTTPBadRequest(explanation='Invalid uuid %s' % id)
            key = 'uuid'
        else:
            key = 'id'
        for item in self._all(req.context):
            if str(getattr(item.node, key)) == id:
                return item
        raise _not_found(id)

    @validation.query_schema(empty_query, '2.1', '2.52')
    @validation.query_schema(schema.show_query_v253, '2.53')
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(hv_policies.BASE % 'show', {})
        with_servers = avr.is_supported(req, '2.53') and strutils.bool_from_string(
            req.GET.get('with_servers', False), strict=True)
        return {'hypervisor': self._view(req, self._find(req, id), True, with_servers)}

    @validation.no_body
    @wsgi.api_version('2.1', '2.87')
    def uptime(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(hv_policies.BASE % 'uptime', {})
        item = self._find(req, id)
        try:
            uptime = self._host_uptime(req.context, item)
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(
                explanation='The requested functionality is not supported.') from exc
        except exception.ComputeServiceUnavailable as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        body = view.hypervisor(req, item.node, item.service,
                               self._servicegroup.service_is_up(item.service))
        body['uptime'] = uptime
        return {'hypervisor': body}

    @validation.no_body
    @wsgi.api_version('2.1', '2.87')
    def statistics(self, req: wsgi.Request) -> dict:
        req.context.can(hv_policies.BASE % 'statistics', {})
        return view.statistics([i.node for i in self._all(req.context)])

    # -- by host name (until 2.52) -----------------------------------------------------

    def _matching(self, req: wsgi.Request, pattern: str) -> list[Node]:
        items = [i for i in self._all(req.context)
                 if pattern in (i.node.hypervisor_hostname or '')]
        if not items:
            raise _no_match(pattern)
        return items

    @validation.no_body
    @wsgi.api_version('2.1', '2.52')
    def search(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(hv_policies.BASE % 'search', {})
        return {'hypervisors': [self._view(req, i) for i in self._matching(req, id)]}

    @validation.no_body
    @wsgi.api_version('2.1', '2.52')
    def servers(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(hv_policies.BASE % 'servers', {})
        return {'hypervisors': [self._view(req, i, with_servers=True)
                                for i in self._matching(req, id)]}
