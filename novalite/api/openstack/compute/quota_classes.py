"""The os-quota-class-sets API: the limits of a quota class (``default`` is what every
project gets unless it has its own)."""
from __future__ import annotations

import webob.exc

from novalite import quota
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import quota_classes as schema
from novalite.policies import quota_class_sets as qc_policies

_GROUP_RESOURCES = ('server_groups', 'server_group_members')


def _hidden(req: wsgi.Request) -> set[str]:
    """Before 2.50 the server group quotas are not shown, from 2.50 the network ones
    are not, and from 2.57 the injected file ones are not either."""
    if not avr.is_supported(req, '2.50'):
        return set(_GROUP_RESOURCES)
    hidden = set(quota.NETWORK_RESOURCES)
    if avr.is_supported(req, '2.57'):
        hidden.update(quota.INJECTED_FILE_RESOURCES)
    return hidden


def _check_name(name: str) -> None:
    if not 1 <= len(name) <= 255:
        raise webob.exc.HTTPBadRequest(
            explanation='quota_class_name has to be between 1 and 255 characters long.')


class QuotaClassSetsController(wsgi.Controller):

    @staticmethod
    def _format(req: wsgi.Request, quota_class: str | None) -> dict:
        hidden = _hidden(req)
        body: dict = {'id': quota_class} if quota_class is not None else {}
        body.update((k, v) for k, v in quota.get_class_limits(quota_class or '').items()
                    if k not in hidden)
        return {'quota_class_set': body}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(qc_policies.BASE % 'show', {'quota_class': id})
        _check_name(id)
        return self._format(req, id)

    @validation.schema(schema.update, '2.1', '2.49')
    @validation.schema(schema.update_v250, '2.50', '2.56')
    @validation.schema(schema.update_v257, '2.57')
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        req.context.can(qc_policies.BASE % 'update', {'quota_class': id})
        _check_name(id)
        quota.set_class_limits(id, {k: int(v) for k, v in body['quota_class_set'].items()})
        body = self._format(req, id)
        del body['quota_class_set']['id']
        return body
