"""Schemas of the os-aggregates API: create, update and the three actions."""
from __future__ import annotations

from typing import Any

from novalite.api.validation import parameter_types as pt

# Zone names may not hold ':' (``zone:host:node`` is how admins pick a host).
az_name = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'pattern': '^[^:]*$',
           'format': 'name'}
az_name_or_null = {'oneOf': [az_name, {'type': 'null'}]}

_name = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'format': 'name'}
# A new name may carry spaces at its ends (stripped), as in Nova.
_new_name = dict(_name, format='name_with_leading_trailing_spaces')

create = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {'name': _name, 'availability_zone': az_name_or_null},
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

update = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {'name': _new_name, 'availability_zone': az_name_or_null},
            'additionalProperties': False,
            'anyOf': [{'required': ['name']}, {'required': ['availability_zone']}],
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

_host = pt.hostname

add_host: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'add_host': {
            'type': 'object',
            'properties': {'host': _host},
            'required': ['host'],
            'additionalProperties': False,
        },
    },
    'required': ['add_host'],
    'additionalProperties': False,
}

remove_host: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'remove_host': {
            'type': 'object',
            'properties': {'host': _host},
            'required': ['host'],
            'additionalProperties': False,
        },
    },
    'required': ['remove_host'],
    'additionalProperties': False,
}

_metadata_value = {'type': ['string', 'null'], 'maxLength': 255}

set_metadata: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'set_metadata': {
            'type': 'object',
            'properties': {
                'metadata': {
                    'type': 'object',
                    'patternProperties': {
                        '^[a-zA-Z0-9-_:. ]{1,255}$': _metadata_value,
                    },
                    'additionalProperties': False,
                    'properties': {'availability_zone': {
                        'oneOf': [az_name, {'type': 'null'}]}},
                },
            },
            'required': ['metadata'],
            'additionalProperties': False,
        },
    },
    'required': ['set_metadata'],
    'additionalProperties': False,
}

# POST /os-aggregates/{id}/action carries exactly one of the three actions.
action = {
    'type': 'object',
    'properties': {
        'add_host': add_host['properties']['add_host'],
        'remove_host': remove_host['properties']['remove_host'],
        'set_metadata': set_metadata['properties']['set_metadata'],
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}
