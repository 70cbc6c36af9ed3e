"""The os-server-groups API: affinity and anti-affinity groups of a project's servers.

Servers join a group at boot through the ``group`` scheduler hint. Before 2.64 a group
has a one-element ``policies`` list (and an always empty ``metadata``); from 2.64 one
``policy`` and ``rules`` (``max_server_per_host`` for anti-affinity).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import strutils

from novalite import exception, objects, quota
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import server_groups as schema
from novalite.conf import CONF
from novalite.objects import instance_group as ig_obj
from novalite.policies import server_groups as sg_policies

if TYPE_CHECKING:
    from novalite.context import RequestContext

_OVER_QUOTA = 'Quota exceeded, too many server groups.'


def _view(req: wsgi.Request, group: objects.InstanceGroup) -> dict:
    body: dict = {'id': group.uuid, 'name': group.name}
    if avr.is_supported(req, '2.64'):
        body['policy'] = group.policy
        body['rules'] = dict(group.rules or {})
    else:
        body['policies'] = [group.policy] if group.policy else []
        body['metadata'] = {}
    body['members'] = group.get_live_members()
    if avr.is_supported(req, '2.13'):
        body['project_id'] = group.project_id
        body['user_id'] = group.user_id
    return body


def _page(req: wsgi.Request, items: list) -> list:
    """``offset`` and ``limit`` (capped at ``[api] max_limit``) applied to ``items``."""
    offset = int(req.GET.get('offset', 0))
    limit = int(req.GET.get('limit', 0)) or CONF.api.max_limit
    return items[offset:offset + min(limit, CONF.api.max_limit)]


class ServerGroupController(wsgi.Controller):

    @staticmethod
    def _get(context: RequestContext, group_id: str) -> objects.InstanceGroup:
        return objects.InstanceGroup.get_by_uuid(context, group_id)

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        project_id = context.project_id
        context.can(sg_policies.BASE % 'index', {'project_id': project_id})
        all_projects = 'all_projects' in req.GET and strutils.bool_from_string(
            req.GET['all_projects'], default=True)
        groups: Sequence[objects.InstanceGroup]
        if all_projects:
            context.can(sg_policies.BASE % 'index:all_projects', {'project_id': project_id})
            groups = objects.InstanceGroupList.get_all(context)
        else:
            # A caller scoped to no project owns no group.
            groups = (objects.InstanceGroupList.get_by_project_id(context, project_id)
                      if project_id is not None else [])
        return {'server_groups': [_view(req, g) for g in _page(req, list(groups))]}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        group = self._get(context, id)
        context.can(sg_policies.BASE % 'show', {'project_id': group.project_id})
        return {'server_group': _view(req, group)}

    @validation.no_body
    @wsgi.response(204)
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        group = self._get(context, id)
        context.can(sg_policies.BASE % 'delete', {'project_id': group.project_id})
        group.destroy()

    @validation.schema(schema.create, '2.1', '2.14')
    @validation.schema(schema.create_v215, '2.15', '2.63')
    @validation.schema(schema.create_v264, '2.64')
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        project_id, user_id = context.project_id, context.user_id
        context.can(sg_policies.BASE % 'create',
                    {'project_id': project_id, 'user_id': user_id})
        values = body['server_group']
        if avr.is_supported(req, '2.64'):
            policy = values['policy']
            rules = {k: int(v) for k, v in (values.get('rules') or {}).items()}
            if rules and policy != ig_obj.ANTI_AFFINITY:
                raise webob.exc.HTTPBadRequest(
                    explanation='Only anti-affinity policy supports rules.')
        else:
            policy, rules = values['policies'][0], {}
        self._check_quota(context, 1)
        group = objects.InstanceGroup(context, name=values['name'], policy=policy,
                                      rules=rules, project_id=project_id, user_id=user_id)
        group.create()
        if CONF.quota.recheck_quota:
            # Concurrent creates may together have passed the limit: the later loses.
            try:
                self._check_quota(context, 0)
            except webob.exc.HTTPForbidden:
                group.destroy()
                raise
        return {'server_group': _view(req, group)}

    @staticmethod
    def _check_quota(context: RequestContext, delta: int) -> None:
        try:
            quota.check_deltas(context, {'server_groups': delta}, context.project_id,
                               context.user_id)
        except exception.QuotaError as exc:
            raise webob.exc.HTTPForbidden(explanation=_OVER_QUOTA) from exc
