"""Schemas of the os-volumes and os-snapshots proxies to Cinder (2.1 to 2.35), as Nova's:
the bodies keep the old ``display_name``/``display_description`` spelling, and the lists
take ``limit`` and ``offset`` (other query parameters are ignored)."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

create = {
    'type': 'object',
    'properties': {
        'volume': {
            'type': 'object',
            'properties': {
                'volume_type': {'type': 'string'},
                # Loose, as Nova's: Cinder judges the keys and values.
                'metadata': {'type': 'object', 'properties': {},
                             'additionalProperties': True},
                'snapshot_id': {'type': 'string'},
                'size': {'type': ['integer', 'string'], 'pattern': '^[0-9]+$',
                         'minimum': 1},
                'availability_zone': {'type': 'string'},
                'display_name': {'type': 'string'},
                'display_description': {'type': 'string'},
            },
            'required': ['size'],
            'additionalProperties': False,
        },
    },
    'required': ['volume'],
    'additionalProperties': False,
}

create_snapshot = {
    'type': 'object',
    'properties': {
        'snapshot': {
            'type': 'object',
            'properties': {
                'volume_id': {'type': 'string'},
                'force': pt.boolean,
                'display_name': {'type': 'string'},
                'display_description': {'type': 'string'},
            },
            'required': ['volume_id'],
            'additionalProperties': False,
        },
    },
    'required': ['snapshot'],
    'additionalProperties': False,
}

index_query = {
    'type': 'object',
    'properties': {'limit': pt.multi_params(pt.non_negative_integer),
                   'offset': pt.multi_params(pt.non_negative_integer)},
    'additionalProperties': True,
}
detail_query = index_query
show_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
