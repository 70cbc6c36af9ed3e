"""The os-quota-sets API: a project's (or user's) limits, their usage, and changing them.

Quotas are counted (novalite.quota): ``reserved`` is always 0, and a new limit below
what is already used is refused unless ``force`` is given.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import strutils

from novalite import quota
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import quota_sets as schema
from novalite.policies import quota_sets as qs_policies

if TYPE_CHECKING:
    from novalite.context import RequestContext


def hidden_resources(req: wsgi.Request) -> set[str]:
    """Resources a microversion no longer reports: 2.36 the network ones, 2.57 the
    injected files."""
    hidden: set[str] = set()
    if avr.is_supported(req, '2.36'):
        hidden.update(quota.NETWORK_RESOURCES)
    if avr.is_supported(req, '2.57'):
        hidden.update(quota.INJECTED_FILE_RESOURCES)
    return hidden


def _user_id(req: wsgi.Request) -> str | None:
    return req.GET.get('user_id') or None


def _no_infinity(value: int) -> float:
    return float('inf') if value == -1 else value


class QuotaSetsController(wsgi.Controller):

    @staticmethod
    def _format(req: wsgi.Request, project_id: str | None, values: dict) -> dict:
        hidden = hidden_resources(req)
        body: dict = {'id': project_id} if project_id is not None else {}
        body.update((k, v) for k, v in values.items() if k not in hidden)
        return {'quota_set': body}

    @staticmethod
    def _authorize(req: wsgi.Request, action: str, project_id: str, user_id: str | None) -> None:
        target = {'project_id': project_id, 'user_id': user_id or req.context.user_id}
        req.context.can(qs_policies.BASE % action, target)

    @validation.query_schema(schema.query, '2.1', '2.74')
    @validation.query_schema(schema.query_v275, '2.75')
    def show(self, req: wsgi.Request, id: str) -> dict:
        user_id = _user_id(req)
        self._authorize(req, 'show', id, user_id)
        return self._format(req, id, quota.get_project_limits(id, user_id))

    @validation.query_schema(schema.query, '2.1', '2.74')
    @validation.query_schema(schema.query_v275, '2.75')
    def detail(self, req: wsgi.Request, id: str) -> dict:
        user_id = _user_id(req)
        self._authorize(req, 'detail', id, user_id)
        limits = quota.get_project_limits(id, user_id)
        usage = quota.in_use(req.context, id, user_id)
        return self._format(req, id, {k: {'limit': v, 'in_use': usage.get(k, 0),
                                          'reserved': 0} for k, v in limits.items()})

    @validation.query_schema(schema.defaults_query)
    def defaults(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(qs_policies.BASE % 'defaults', {'project_id': id})
        return self._format(req, id, quota.get_class_limits())

    @validation.schema(schema.update, '2.1', '2.35')
    @validation.schema(schema.update_v236, '2.36', '2.56')
    @validation.schema(schema.update_v257, '2.57')
    @validation.query_schema(schema.query, '2.1', '2.74')
    @validation.query_schema(schema.query_v275, '2.75')
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        user_id = _user_id(req)
        self._authorize(req, 'update', id, user_id)
        values = dict(body['quota_set'])
        force = strutils.bool_from_string(values.pop('force', False), strict=True)
        wanted = {k: int(v) for k, v in values.items()}
        if not force and wanted:
            self._check_settable(req.context, id, user_id, wanted)
        quota.set_limits(id, wanted, user_id)
        return self._format(req, None, quota.get_project_limits(id, user_id))

    @staticmethod
    def _check_settable(context: RequestContext, project_id: str, user_id: str | None,
                        wanted: dict[str, int]) -> None:
        """A limit may not go below the usage, nor a user's above the project's.

        :raises HTTPBadRequest: naming the first limit that does not fit
        """
        usage = quota.in_use(context, project_id, user_id)
        ceiling = quota.get_project_limits(project_id) if user_id else {}
        for resource, value in sorted(wanted.items()):
            minimum = usage.get(resource, 0)
            if _no_infinity(value) < _no_infinity(minimum):
                raise webob.exc.HTTPBadRequest(
                    explanation='Quota limit %s for %s must be greater than or equal to '
                                'already used and reserved %s.' % (value, resource, minimum))
            maximum = ceiling.get(resource, -1)
            if _no_infinity(value) > _no_infinity(maximum):
                raise webob.exc.HTTPBadRequest(
                    explanation='Quota limit %s for %s must be less than or equal to %s.'
                                % (value, resource, maximum))

    @wsgi.response(202)
    @validation.query_schema(schema.query, '2.1', '2.74')
    @validation.query_schema(schema.query_v275, '2.75')
    def delete(self, req: wsgi.Request, id: str) -> None:
        user_id = _user_id(req)
        self._authorize(req, 'delete', id, user_id)
        quota.delete_limits(id, user_id)
