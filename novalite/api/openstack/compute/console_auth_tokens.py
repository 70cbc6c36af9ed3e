"""GET /os-console-auth-tokens/{token}: where an unexpired console token connects
(admins). From 2.31, for every console type; before, Nova served it only for RDP's
tokens, which are gone with its Hyper-V driver: 400. Reading a token does not use it up.
"""
from __future__ import annotations

import webob.exc

from novalite import context as nl_context
from novalite import objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import console_auth_tokens as schema
from novalite.policies import console_auth_tokens as cat_policies

CELL_TIMEOUT = 60


class ConsoleAuthTokensController(wsgi.Controller):

    @validation.query_schema(schema.show_query, '2.1', '2.98')
    @validation.query_schema(schema.show_query_v299, '2.99')
    def show(self, req: wsgi.Request, id: str) -> dict:
        if not avr.is_supported(req, '2.31'):
            raise webob.exc.HTTPBadRequest(
                explanation='Console tokens are shown from microversion 2.31.')
        context = req.context
        context.can(cat_policies.BASE_POLICY_NAME)
        # The token's cell is unknown: ask every cell (cell0 has no consoles); a token
        # belongs to one server, so one cell at most has it.
        cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
        results = nl_context.scatter_gather_cells(
            context, cells, CELL_TIMEOUT, objects.ConsoleAuthToken.validate, id)
        found = next((r for r in results.values()
                      if isinstance(r, objects.ConsoleAuthToken)), None)
        if found is None:
            raise webob.exc.HTTPNotFound(explanation='Token not found')
        console = {'instance_uuid': found.instance_uuid, 'host': found.host,
                   'port': found.port, 'internal_access_path': found.internal_access_path}
        if found.console_type == 'spice-direct' and avr.is_supported(req, '2.99'):
            console['tls_port'] = found.tls_port
        return {'console': console}
