"""GET /servers/{server_id}/topology (2.78): the guest's NUMA cells.

novalite builds no guest with a NUMA topology (no ``hw:numa_*`` placement, no CPU
pinning), so every server answers as Nova does for one without: no nodes, no page
size. The ``host:index`` rule (host node and pinning of each node) has nothing to
show until then.
"""
from __future__ import annotations

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import server_topology as schema
from novalite.policies import server_topology as st_policies


class ServerTopologyController(common.ComputeAPIUser, wsgi.Controller):

    @wsgi.api_version('2.78')
    @validation.query_schema(schema.index_query, '2.78', '2.101')
    @validation.query_schema(schema.index_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(st_policies.BASE_POLICY_NAME % 'index',
                    {'project_id': instance.project_id})
        return {'nodes': [], 'pagesize_kb': None}
