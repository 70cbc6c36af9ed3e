"""Schemas of os-flavor-access: the addTenantAccess and removeTenantAccess actions."""
from __future__ import annotations


def _action(name: str) -> dict:
    return {
        'type': 'object',
        'properties': {name: {
            'type': 'object',
            'properties': {'tenant': {'type': 'string', 'minLength': 1, 'maxLength': 255}},
            'required': ['tenant'],
            'additionalProperties': False,
        }},
        'required': [name],
        'additionalProperties': False,
    }


add_tenant_access = _action('addTenantAccess')
remove_tenant_access = _action('removeTenantAccess')

# POST /flavors/{id}/action: one of the two.
action = {'oneOf': [add_tenant_access, remove_tenant_access]}
