"""The os-flavor-access API: which projects may use a private flavor."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite.api import validation
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import flavors
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import flavor_access as schema
from novalite.policies import flavor_access as fa_policies

if TYPE_CHECKING:
    from novalite import objects


def _access_list(flavor: objects.Flavor) -> dict:
    return {'flavor_access': [{'flavor_id': flavor.flavorid, 'tenant_id': project}
                              for project in sorted(flavor.projects)]}


class FlavorAccessController(wsgi.Controller):

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, flavor_id: str) -> dict:
        context = req.context
        context.can(fa_policies.BASE_POLICY_NAME, {'project_id': context.project_id})
        # A deployment may open the list to members: never for a flavor they cannot see.
        flavor = flavors.get_visible_flavor(context, flavor_id)
        if flavor.is_public:
            raise webob.exc.HTTPNotFound(
                explanation='Access list not available for public flavors.')
        return _access_list(flavor)

    @validation.schema(schema.action)
    def action(self, req: wsgi.Request, id: str, body: dict) -> dict:
        """POST /flavors/{id}/action: addTenantAccess or removeTenantAccess."""
        context = req.context
        name = 'add_tenant_access' if 'addTenantAccess' in body else 'remove_tenant_access'
        context.can(fa_policies.POLICY_ROOT % name, {'project_id': context.project_id})
        flavor = flavors.get_visible_flavor(context, id)
        if name == 'add_tenant_access':
            if flavor.is_public:
                raise webob.exc.HTTPConflict(
                    explanation='Can not add access to a public flavor.')
            flavor.add_access(body['addTenantAccess']['tenant'])
        else:
            flavor.remove_access(body['removeTenantAccess']['tenant'])
        return _access_list(flavor)
