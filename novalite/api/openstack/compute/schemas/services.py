"""Schemas of the os-services API: the list filters and the 2.53 update body."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

index_query = {
    'type': 'object',
    'properties': {
        'host': {'type': 'array', 'items': {'type': 'string'}},
        'binary': {'type': 'array', 'items': {'type': 'string'}},
    },
    'additionalProperties': True,
}

# From 2.75 unknown query parameters are refused instead of ignored.
index_query_275 = dict(index_query, additionalProperties=False)

update_v253 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'forced_down': pt.boolean,
    },
    'additionalProperties': False,
    'minProperties': 1,
}
