"""The flavors API: list and show for everyone; create, update, delete for administrators."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc
from oslo_utils import strutils, uuidutils

from novalite import exception, objects
from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import flavors as schema
from novalite.api.openstack.compute.views import flavors as flavors_view
from novalite.policies import flavors as fl_policies

if TYPE_CHECKING:
    from novalite.context import RequestContext


def _parse_is_public(value: str | None) -> bool | None:
    """The admin's ``is_public`` filter: absent → public only, ``none`` → all."""
    if value is None:
        return True
    if value.strip().lower() == 'none':
        return None
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid is_public filter [%s]' % value) from exc


def _int_filter(req: wsgi.Request, name: str) -> int | None:
    value = req.GET.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid %s filter [%s]' % (name, value)) from exc


def get_visible_flavor(context: RequestContext, flavor_id: str) -> objects.Flavor:
    """The flavor, if ``context`` may see it: public, shared with its project, or admin.

    :raises FlavorNotFound: no such flavor, or a private one of other projects
    """
    flavor = objects.Flavor.get_by_flavor_id(context, flavor_id)
    if not (flavor.is_public or context.is_admin or context.project_id in flavor.projects):
        raise exception.FlavorNotFound(flavor_id=flavor_id)
    return flavor


class FlavorsController(wsgi.Controller[flavors_view.ViewBuilder]):
    _view_builder_class = flavors_view.ViewBuilder

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_275, '2.75', '2.101')
    @validation.query_schema(schema.index_query_v2102, '2.102')
    def index(self, req: wsgi.Request) -> dict:
        return self._view_builder.index(req, self._get_flavors(req))

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_275, '2.75', '2.101')
    @validation.query_schema(schema.index_query_v2102, '2.102')
    def detail(self, req: wsgi.Request) -> dict:
        return self._view_builder.detail(req, self._get_flavors(req))

    @validation.query_schema(schema.show_query, '2.1', '2.101')
    @validation.query_schema(schema.show_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        return self._view_builder.show(req, get_visible_flavor(req.context, id))

    def _get_flavors(self, req: wsgi.Request) -> list:
        context = req.context
        filters: dict[str, Any] = {}
        if context.is_admin:
            filters['is_public'] = _parse_is_public(req.GET.get('is_public'))
        else:
            filters['is_public'] = True
        min_ram = _int_filter(req, 'minRam')
        if min_ram is not None:
            filters['min_memory_mb'] = min_ram
        min_disk = _int_filter(req, 'minDisk')
        if min_disk is not None:
            filters['min_root_gb'] = min_disk
        # ``name`` reaches here from 2.102 only: dropped before 2.75, refused until 2.102.
        if 'name' in req.GET:
            filters['name'] = req.GET['name']
        limit, marker = common.get_limit_and_marker(req)
        flavors = objects.FlavorList.get_all(
            context, inactive=bool(context.is_admin), filters=filters,
            sort_key=req.GET.get('sort_key') or 'flavorid',
            sort_dir=req.GET.get('sort_dir') or 'asc', limit=limit, marker=marker)
        return list(flavors)

    @wsgi.response(200)
    @validation.schema(schema.create, '2.1', '2.54')
    @validation.schema(schema.create_v255, '2.55', '2.101')
    @validation.schema(schema.create_v2102, '2.102')
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        context.can(fl_policies.MANAGE % 'create', {'project_id': context.project_id})
        values = body['flavor']
        flavorid = values.get('id')
        flavor = objects.Flavor(
            context=context,
            name=values['name'],
            flavorid=str(flavorid) if flavorid is not None else uuidutils.generate_uuid(),
            memory_mb=int(values['ram']),
            vcpus=int(values['vcpus']),
            root_gb=int(values['disk']),
            ephemeral_gb=int(values.get('OS-FLV-EXT-DATA:ephemeral', 0)),
            swap=int(values.get('swap', 0)),
            rxtx_factor=float(values.get('rxtx_factor', 1.0)),
            is_public=strutils.bool_from_string(
                values.get('os-flavor-access:is_public', True), strict=True),
            description=values.get('description'),
            disabled=False, extra_specs={}, projects=[])
        flavor.create()
        return self._view_builder.show(req, flavor)

    @wsgi.api_version('2.55')
    @validation.schema(schema.update_v255)
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        """Change the description of a flavor: the only mutable field (2.55)."""
        context = req.context
        context.can(fl_policies.MANAGE % 'update', {'project_id': context.project_id})
        flavor = objects.Flavor.get_by_flavor_id(context, id)
        flavor.description = body['flavor']['description']
        flavor.save()
        return self._view_builder.show(req, flavor)

    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(fl_policies.MANAGE % 'delete', {'project_id': context.project_id})
        objects.Flavor.get_by_flavor_id(context, id).destroy()
