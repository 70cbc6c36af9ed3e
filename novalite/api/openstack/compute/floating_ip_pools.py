"""os-floating-ip-pools (2.1 to 2.35, 404 from 2.36): the external networks of Neutron,
by name. Without Neutron there is none."""
from __future__ import annotations

from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import floating_ip_pools as schema
from novalite.network import client as neutron_client
from novalite.network import floating_ip_api
from novalite.policies import floating_ip_pools as policies


class FloatingIPPoolsController(wsgi.Controller):

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(policies.BASE_POLICY_NAME, {'project_id': context.project_id})
        if not neutron_client.configured():
            return {'floating_ip_pools': []}
        pools = floating_ip_api.pools(neutron_client.Client(context))
        return {'floating_ip_pools': [{'name': p.get('name') or p['id']} for p in pools]}
