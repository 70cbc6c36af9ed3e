"""Schemas of the server metadata API."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

# POST (merge) and PUT (replace) of the whole set.
create = {
    'type': 'object',
    'properties': {'metadata': pt.metadata},
    'required': ['metadata'],
    'additionalProperties': False,
}

update_all = create

# PUT of one item: exactly one key, the one of the URL.
update = {
    'type': 'object',
    'properties': {'meta': dict(pt.metadata, minProperties=1, maxProperties=1)},
    'required': ['meta'],
    'additionalProperties': False,
}
