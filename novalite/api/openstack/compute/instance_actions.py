"""The os-instance-actions API: what was done to a server, and the events of each action."""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import timeutils

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import instance_actions as schema
from novalite.api.openstack.compute.views import instance_actions as view
from novalite.policies import instance_actions as ia_policies

if TYPE_CHECKING:
    from novalite import objects

POLICY = ia_policies.BASE_POLICY_NAME


class InstanceActionsController(common.ComputeAPIUser, wsgi.Controller[view.ViewBuilder]):
    _view_builder_class = view.ViewBuilder

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> objects.Instance:
        context = req.context
        if avr.is_supported(req, '2.21'):
            # From 2.21 the history of deleted servers can be read too.
            context = copy.copy(context)
            context.read_deleted = 'yes'
        instance = common.get_instance(self.compute_api, context, server_id)
        req.context.can(POLICY % action, {'project_id': instance.project_id})
        return instance

    @validation.query_schema(empty_query, '2.1', '2.57')
    @validation.query_schema(schema.list_query_params_v258, '2.58', '2.65')
    @validation.query_schema(schema.list_query_params_v266, '2.66')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        instance = self._instance(req, server_id, 'list')
        if not avr.is_supported(req, '2.58'):
            actions = self.compute_api.actions_get(req.context, instance)
            return self._view_builder.index(req, server_id, actions)
        filters = _time_filters(req)
        limit, marker = common.get_limit_and_marker(req)
        try:
            actions = self.compute_api.actions_get(req.context, instance, limit=limit,
                                                   marker=marker, filters=filters)
        except exception.MarkerNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return self._view_builder.index(req, server_id, actions)

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        context = req.context
        instance = self._instance(req, server_id, 'show')
        found = self.compute_api.action_get_by_request_id(context, instance, id)
        if found is None:
            raise webob.exc.HTTPNotFound(explanation='Action %s not found' % id)
        action, events = found
        target = {'project_id': instance.project_id}
        admin_events = context.can(POLICY % 'events', target, fatal=False)
        shown = view.EventFields(
            events=admin_events or avr.is_supported(req, '2.51'),
            traceback=admin_events,
            host=admin_events and avr.is_supported(req, '2.62'),
            host_id=avr.is_supported(req, '2.62'),
            details=avr.is_supported(req, '2.84') and
            context.can(POLICY % 'events:details', target, fatal=False))
        return self._view_builder.show(req, action, events if shown.events else None,
                                       shown, instance.project_id)


def _time_filters(req: wsgi.Request) -> dict:
    filters = {}
    for key in ('changes-since', 'changes-before'):
        if key in req.GET:
            filters[key] = timeutils.parse_isotime(req.GET[key])
    since, before = filters.get('changes-since'), filters.get('changes-before')
    if since and before and before < since:
        raise webob.exc.HTTPBadRequest(
            explanation='The value of changes-since must be less than or equal to '
                        'changes-before.')
    return filters
