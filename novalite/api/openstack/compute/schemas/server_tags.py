"""Schemas of the server tags API."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

update_all = {
    'type': 'object',
    'properties': {'tags': pt.tags},
    'required': ['tags'],
    'additionalProperties': False,
}

# PUT /servers/{id}/tags/{tag} carries the tag in its URL: no body, as Nova.
update = {'type': 'null'}
