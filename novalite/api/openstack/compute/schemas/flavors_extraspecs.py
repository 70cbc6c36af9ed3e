"""Schemas of os-extra_specs: the specs of a flavor, keys and values of 255 characters."""
from __future__ import annotations

_KEY = '^[a-zA-Z0-9-_:. ]{1,255}$'
# Strings and numbers, as Nova (a JSON boolean is refused: write "true").
_VALUE = {'type': ['string', 'number'], 'minLength': 0, 'maxLength': 255}

_specs = {
    'type': 'object',
    'patternProperties': {_KEY: _VALUE},
    'additionalProperties': False,
}

create = {
    'type': 'object',
    'properties': {'extra_specs': _specs},
    'required': ['extra_specs'],
    'additionalProperties': False,
}

# PUT /flavors/{id}/os-extra_specs/{key}: {key: value} with the key of the URL.
update = dict(_specs, minProperties=1, maxProperties=1)
