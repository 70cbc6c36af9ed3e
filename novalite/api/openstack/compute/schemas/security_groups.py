"""Schemas of the security group proxies (os-security-groups, os-security-group-rules)
and of the addSecurityGroup and removeSecurityGroup server actions.

As in Nova, unknown keys are let through: these APIs stopped changing at 2.36.
"""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_NAME_OR_DESCRIPTION = {'type': 'string', 'minLength': 0, 'maxLength': 255}

create = {
    'type': 'object',
    'properties': {
        'security_group': {
            'type': 'object',
            'properties': {'name': _NAME_OR_DESCRIPTION, 'description': _NAME_OR_DESCRIPTION},
            'required': ['name', 'description'],
            'additionalProperties': True,
        },
    },
    'required': ['security_group'],
    'additionalProperties': True,
}

update = create

# Ports and protocol are checked by the API (Nova's messages), not here.
create_rules = {
    'type': 'object',
    'properties': {
        'security_group_rule': {
            'type': 'object',
            'properties': {
                'group_id': {'oneOf': [{'type': 'null'}, pt.uuid]},
                'parent_group_id': pt.uuid,
                'to_port': {}, 'from_port': {}, 'ip_protocol': {}, 'cidr': {},
            },
            'required': ['parent_group_id'],
            'additionalProperties': True,
        },
    },
    'required': ['security_group_rule'],
    'additionalProperties': True,
}

index_query = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.non_negative_integer),
        'offset': pt.multi_params(pt.non_negative_integer),
        'all_tenants': pt.multi_params({'type': 'string'}),
    },
    'additionalProperties': True,
}

show_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
server_sg_index_query = show_query
server_sg_index_query_v2102 = dict(show_query, additionalProperties=False)


def _action(name: str) -> dict:
    return {'type': 'object',
            'properties': {name: {'type': 'object',
                                  'properties': {'name': {'type': 'string', 'minLength': 1}},
                                  'required': ['name'], 'additionalProperties': False}},
            'required': [name], 'additionalProperties': True}


add_security_group = _action('addSecurityGroup')
remove_security_group = _action('removeSecurityGroup')
