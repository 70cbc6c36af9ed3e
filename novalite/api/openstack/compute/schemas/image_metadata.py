"""Schemas of the image metadata proxy: Nova's server metadata shapes."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

create = {
    'type': 'object',
    'properties': {'metadata': pt.metadata},
    'required': ['metadata'],
    'additionalProperties': False,
}

update_all = create

update = {
    'type': 'object',
    'properties': {'meta': dict(pt.metadata, minProperties=1, maxProperties=1)},
    'required': ['meta'],
    'additionalProperties': False,
}
