"""Schema of ``POST /os-aggregates/{id}/images`` (2.81): the images to pre-cache."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

aggregate_images = {
    'type': 'object',
    'properties': {
        'cache': {
            'type': ['array'],
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {'id': pt.uuid},
                'additionalProperties': False,
                'required': ['id'],
            },
        },
    },
    'required': ['cache'],
    'additionalProperties': False,
}
