"""The os-migrations API: the migrations of every cell, for administrators.

Until 2.59 the list is unpaged and unknown filters are ignored; from 2.59 it is
newest first, paged by a migration uuid, filterable by ``changes-since`` (and
``changes-before`` from 2.66, user and project from 2.80) and strict about its query.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc
from oslo_utils import strutils, timeutils

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import migrations as schema
from novalite.api.openstack.compute.views import migrations as view
from novalite.policies import migrations as mig_policies

if TYPE_CHECKING:
    from novalite.compute.api import API as ComputeAPI

_PLAIN_FILTERS = ('host', 'status', 'instance_uuid', 'source_compute', 'migration_type')


def _filters(req: wsgi.Request) -> dict:
    """The list filters of the request's microversion, parsed."""
    params = req.GET
    filters: dict[str, Any] = {k: params[k] for k in _PLAIN_FILTERS if k in params}
    # Hidden migrations are never shown: leaving them out in the query (not only in
    # the view) keeps pages full.
    filters['hidden'] = strutils.bool_from_string(params.get('hidden', False))
    if avr.is_supported(req, '2.59') and 'changes-since' in params:
        filters['changes-since'] = timeutils.parse_isotime(params['changes-since'])
    if avr.is_supported(req, '2.66') and 'changes-before' in params:
        filters['changes-before'] = timeutils.parse_isotime(params['changes-before'])
        since = filters.get('changes-since')
        if since is not None and filters['changes-before'] < since:
            raise webob.exc.HTTPBadRequest(
                explanation='The value of changes-since must be less than or equal to '
                            'changes-before.')
    if avr.is_supported(req, '2.80'):
        for key in ('user_id', 'project_id'):
            if key in params:
                filters[key] = params[key]
    return filters


class MigrationsController(common.ComputeAPIUser, wsgi.Controller[view.ViewBuilder]):

    def __init__(self, compute_api: ComputeAPI | None = None) -> None:
        super().__init__(compute_api)
        self._view_builder = view.ViewBuilder()

    @validation.query_schema(schema.list_query_v20, '2.1', '2.58')
    @validation.query_schema(schema.list_query_v259, '2.59', '2.65')
    @validation.query_schema(schema.list_query_v266, '2.66', '2.79')
    @validation.query_schema(schema.list_query_v280, '2.80')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(mig_policies.BASE % 'index')
        filters = _filters(req)
        # A project manager lists the own project's migrations only (asked by project_id,
        # 2.80), and never sees their hosts.
        if filters.get('project_id') is None or filters['project_id'] != context.project_id:
            context.can(mig_policies.BASE % 'index:all_projects')
        with_hosts = context.can(mig_policies.BASE % 'index:host', fatal=False)
        paged = avr.is_supported(req, '2.59')
        if paged:
            limit, marker = common.get_limit_and_marker(req)
            try:
                migrations = self.compute_api.get_migrations_sorted(context, filters, limit,
                                                                   marker)
            except exception.MarkerNotFound as exc:
                raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        else:
            migrations = self.compute_api.get_migrations(context, filters)
        body = self._view_builder.index(req, migrations, paged)
        if not with_hosts:
            for migration in body['migrations']:
                view.hide_hosts(migration)
        return body
