"""Schemas of the os-server-groups API: create per microversion and the list query."""
from __future__ import annotations

import copy
from typing import Any

from novalite.api.validation import parameter_types as pt

_POLICIES = ['anti-affinity', 'affinity']
_SOFT_POLICIES = ['soft-anti-affinity', 'soft-affinity']

create: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'server_group': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'policies': {
                    'type': 'array',
                    'items': [{'type': 'string', 'enum': _POLICIES}],
                    'uniqueItems': True,
                    'minItems': 1,
                    'maxItems': 1,
                    'additionalItems': False,
                },
            },
            'required': ['name', 'policies'],
            'additionalProperties': False,
        },
    },
    'required': ['server_group'],
    'additionalProperties': False,
}

# 2.15 adds the soft policies.
create_v215 = copy.deepcopy(create)
create_v215['properties']['server_group']['properties']['policies']['items'] = [
    {'type': 'string', 'enum': _POLICIES + _SOFT_POLICIES}]

# 2.64: one ``policy`` instead of a list, and ``rules``.
create_v264 = {
    'type': 'object',
    'properties': {
        'server_group': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'policy': {'type': 'string', 'enum': _POLICIES + _SOFT_POLICIES},
                'rules': {
                    'type': 'object',
                    'properties': {'max_server_per_host': pt.positive_integer},
                    'additionalProperties': False,
                },
            },
            'required': ['name', 'policy'],
            'additionalProperties': False,
        },
    },
    'required': ['server_group'],
    'additionalProperties': False,
}

index_query = {
    'type': 'object',
    'properties': {
        'all_projects': pt.multi_params({'type': 'string'}),
        'limit': pt.multi_params(pt.non_negative_integer),
        'offset': pt.multi_params(pt.non_negative_integer),
    },
    'additionalProperties': True,
}
index_query_v275 = dict(copy.deepcopy(index_query), additionalProperties=False)
