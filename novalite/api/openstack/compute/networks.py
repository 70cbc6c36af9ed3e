"""os-networks (2.1 to 2.35, 404 from 2.36): Neutron's networks in the shape nova-network
gave them. Only ``id`` and ``label`` (the name) mean anything now; the other keys are
kept, as None, for clients that read them. Without Neutron there is no network.

Creating, deleting and associating networks went with nova-network (410, ``removed``).
"""
from __future__ import annotations

from typing import Any

import webob.exc

from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import networks as schema
from novalite.network import client as neutron_client
from novalite.policies import networks as policies

_FIELDS = ('id', 'cidr', 'netmask', 'gateway', 'broadcast', 'dns1', 'dns2', 'cidr_v6',
           'gateway_v6', 'label', 'netmask_v6')
# Shown to administrators only, as in Nova (all None as well).
_ADMIN_FIELDS = ('created_at', 'updated_at', 'deleted_at', 'deleted', 'injected', 'bridge',
                 'vlan', 'vpn_public_address', 'vpn_public_port', 'vpn_private_address',
                 'dhcp_start', 'project_id', 'host', 'bridge_interface', 'multi_host',
                 'priority', 'rxtx_base', 'mtu', 'dhcp_server', 'enable_dhcp',
                 'share_address')


def network_dict(is_admin: bool, network: dict[str, Any]) -> dict[str, Any]:
    """Nova's view of a Neutron network."""
    fields = _FIELDS + (_ADMIN_FIELDS if is_admin else ())
    view: dict[str, Any] = dict.fromkeys(fields)
    view.update(id=network['id'], label=network.get('name'))
    return view


class NetworkController(wsgi.Controller):

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(policies.POLICY_ROOT % 'list', {'project_id': context.project_id})
        if not neutron_client.configured():
            return {'networks': []}
        networks = neutron_client.Client(context).get('/networks')['networks']
        return {'networks': [network_dict(bool(context.is_admin), n) for n in networks]}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        context.can(policies.POLICY_ROOT % 'show', {'project_id': context.project_id})
        if not neutron_client.configured():
            raise webob.exc.HTTPNotFound(explanation='Network not found')
        try:
            network = neutron_client.Client(context).get('/networks/%s' % id)['network']
        except neutron_client.NeutronNotFound as exc:
            raise webob.exc.HTTPNotFound(explanation='Network not found') from exc
        return {'network': network_dict(bool(context.is_admin), network)}
