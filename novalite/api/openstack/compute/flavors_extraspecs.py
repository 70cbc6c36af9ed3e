"""The os-extra_specs API: the extra specs of a flavor, validated from 2.86."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import flavors
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import flavors_extraspecs as schema
from novalite.api.validation import extra_specs as validators
from novalite.policies import flavors as fl_policies

if TYPE_CHECKING:
    from novalite import objects

POLICY = fl_policies.EXTRA_SPECS


def _as_string(value: object) -> str:
    # Numbers and booleans are stored as strings, as Nova does.
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


class FlavorExtraSpecsController(wsgi.Controller):

    @staticmethod
    def _flavor(req: wsgi.Request, flavor_id: str, action: str) -> objects.Flavor:
        """The flavor, after the policy (so a refused write is 403 whatever the id);
        another project's private flavor is 404 here as in ``GET /flavors/{id}``."""
        context = req.context
        context.can(POLICY % action, {'project_id': context.project_id})
        return flavors.get_visible_flavor(context, flavor_id)

    @staticmethod
    def _checked(req: wsgi.Request, specs: dict) -> dict:
        values = {key: _as_string(value) for key, value in specs.items()}
        if avr.is_supported(req, '2.86'):
            for key, value in values.items():
                validators.validate(key, value)
        return values

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, flavor_id: str) -> dict:
        return {'extra_specs': dict(self._flavor(req, flavor_id, 'index').extra_specs)}

    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, flavor_id: str, body: dict) -> dict:
        flavor = self._flavor(req, flavor_id, 'create')
        specs = self._checked(req, body['extra_specs'])
        flavor.update_extra_specs(specs)
        return {'extra_specs': specs}

    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, flavor_id: str, id: str, body: dict) -> dict:
        flavor = self._flavor(req, flavor_id, 'update')
        if id not in body:
            raise webob.exc.HTTPBadRequest(explanation='Request body and URI mismatch')
        specs = self._checked(req, body)
        flavor.update_extra_specs(specs)
        return specs

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, flavor_id: str, id: str) -> dict:
        flavor = self._flavor(req, flavor_id, 'show')
        if id not in flavor.extra_specs:
            raise exception.FlavorExtraSpecsNotFound(flavor_id=flavor_id, extra_specs_key=id)
        return {id: flavor.extra_specs[id]}

    @validation.no_body
    def delete(self, req: wsgi.Request, flavor_id: str, id: str) -> None:
        self._flavor(req, flavor_id, 'delete').delete_extra_spec(id)
