"""Schemas of the rescue and unrescue server actions."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

rescue = {
    'type': 'object',
    'properties': {
        'rescue': {
            'type': ['object', 'null'],
            'properties': {
                'adminPass': {'type': 'string'},
                'rescue_image_ref': pt.uuid,
            },
            'additionalProperties': False,
        },
    },
    'required': ['rescue'],
    'additionalProperties': False,
}

unrescue = {'type': 'object', 'properties': {'unrescue': {}}, 'required': ['unrescue'],
            'additionalProperties': False}
