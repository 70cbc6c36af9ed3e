"""GET /servers/{server_id}/ips[/{network_label}]: a server's addresses by network.

Read from the server's network info cache, as the server view's ``addresses`` are:
the same entries (``version``, ``addr``; the extended ``OS-EXT-IPS`` attributes only
in the server view, as in Nova).
"""
from __future__ import annotations

import webob.exc

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.network import model
from novalite.policies import ips as ips_policies


def _addresses(instance: object) -> dict[str, list[dict]]:
    # Unset while the server is a build request: no addresses yet.
    cache = getattr(instance, '_obj_info_cache', None)
    entries = model.addresses(cache.network_info if cache is not None else [])
    return {label: [{'version': a['version'], 'addr': a['addr']} for a in addrs]
            for label, addrs in entries.items()}


class IPsController(common.ComputeAPIUser, wsgi.Controller):

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(ips_policies.BASE % 'index', {'project_id': instance.project_id})
        return {'addresses': _addresses(instance)}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(ips_policies.BASE % 'show', {'project_id': instance.project_id})
        addresses = _addresses(instance)
        if id not in addresses:
            raise webob.exc.HTTPNotFound(
                explanation='Instance is not a member of specified network')
        return {id: addresses[id]}
