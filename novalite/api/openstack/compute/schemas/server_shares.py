"""Schemas of the server shares API (2.97): attach body and the strict query strings."""
from __future__ import annotations

create = {
    'type': 'object',
    'properties': {
        'share': {
            'type': 'object',
            'properties': {
                'share_id': {'type': 'string', 'format': 'uuid'},
                'tag': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                        'pattern': '^[a-zA-Z0-9-]*$'},
            },
            'required': ['share_id'],
            'additionalProperties': False,
        },
    },
    'required': ['share'],
    'additionalProperties': False,
}

# A new API: unknown query parameters are refused from its first version.
index_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': False}
show_query = index_query
