"""APIs Nova removed: every method of these routes answers 410 Gone at any microversion.

They belonged to nova-network, cells v1, XenAPI consoles and agent builds; clients that
still call them must learn the API is gone rather than that the URL is wrong (404).
The reads of ``/os-networks`` share the paths but are Nova's proxy to Neutron, served by
``networks.py``.
"""
from __future__ import annotations

import webob.exc

from novalite.api import validation
from novalite.api.openstack import wsgi

_GONE = {'GET': 'gone', 'POST': 'gone_with_body', 'PUT': 'gone_with_body',
         'DELETE': 'gone'}
# Reads of these routes were proxies to Neutron, never removed; these find nothing
# (Nova answers 404 from 2.36 on).
_PROXY_READS = ('/os-tenant-networks', '/os-tenant-networks/{id}')
# The reads the os-networks proxy serves on the same paths.
_PROXIES = {'/os-networks': ('networks', 'index'), '/os-networks/{id}': ('networks', 'show')}


# Whatever body a client sends to a removed API, the answer is the same 410.
ANY_BODY: dict = {}


def _routes(path: str, *methods: str) -> tuple[str, dict[str, tuple[str, str]]]:
    actions = {m: ('removed', _GONE[m]) for m in methods}
    if path in _PROXY_READS:
        actions['GET'] = ('removed', 'not_found')
    if path in _PROXIES:
        actions['GET'] = _PROXIES[path]
    return path, actions


# The paths (and methods) Nova keeps in its route table only to answer 410.
ROUTES = (
    _routes('/os-agents', 'GET', 'POST'),
    _routes('/os-agents/{id}', 'PUT', 'DELETE'),
    _routes('/os-cells', 'GET', 'POST'),
    _routes('/os-cells/capacities', 'GET'),
    _routes('/os-cells/detail', 'GET'),
    _routes('/os-cells/info', 'GET'),
    _routes('/os-cells/sync_instances', 'POST'),
    _routes('/os-cells/{id}', 'GET', 'PUT', 'DELETE'),
    _routes('/os-cells/{id}/capacities', 'GET'),
    _routes('/os-certificates', 'POST'),
    _routes('/os-certificates/{id}', 'GET'),
    _routes('/os-cloudpipe', 'GET', 'POST'),
    _routes('/os-cloudpipe/{id}', 'PUT'),
    _routes('/os-fixed-ips/{id}', 'GET'),
    _routes('/os-fixed-ips/{id}/action', 'POST'),
    _routes('/os-floating-ip-dns', 'GET'),
    _routes('/os-floating-ip-dns/{id}', 'PUT', 'DELETE'),
    _routes('/os-floating-ip-dns/{domain_id}/entries/{id}', 'GET', 'PUT', 'DELETE'),
    _routes('/os-floating-ips-bulk', 'GET', 'POST'),
    _routes('/os-floating-ips-bulk/{id}', 'GET', 'PUT'),
    _routes('/os-fping', 'GET'),
    _routes('/os-fping/{id}', 'GET'),
    _routes('/os-networks', 'POST'),
    _routes('/os-networks/add', 'POST'),
    _routes('/os-networks/{id}', 'DELETE'),
    _routes('/os-networks/{id}/action', 'POST'),
    _routes('/os-security-group-default-rules', 'GET', 'POST'),
    _routes('/os-security-group-default-rules/{id}', 'GET', 'DELETE'),
    _routes('/os-tenant-networks', 'POST'),
    _routes('/os-tenant-networks/{id}', 'DELETE'),
    _routes('/servers/{server_id}/consoles', 'GET', 'POST'),
    _routes('/servers/{server_id}/consoles/{id}', 'GET', 'DELETE'),
    _routes('/servers/{server_id}/os-virtual-interfaces', 'GET'),
)


class RemovedController(wsgi.Controller):
    """No policy and no validation: whatever is sent, the answer is 410."""

    @validation.no_body
    def gone(self, req: wsgi.Request, **kwargs: str) -> None:
        raise webob.exc.HTTPGone(explanation='This API has been removed from the Compute '
                                             'API and is no longer available.')

    @validation.no_body
    def not_found(self, req: wsgi.Request, **kwargs: str) -> None:
        raise webob.exc.HTTPNotFound(explanation='The resource could not be found.')

    @validation.schema(ANY_BODY)
    def gone_with_body(self, req: wsgi.Request, body: object = None, **kwargs: str) -> None:
        self.gone(req)
