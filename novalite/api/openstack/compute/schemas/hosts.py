"""Schemas of the os-hosts API (until 2.42): the list filter and the update body."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_enable_disable = {'type': 'string',
                   'enum': ['enable', 'disable', 'Enable', 'Disable', 'ENABLE', 'DISABLE']}

update = {
    'type': 'object',
    'properties': {'status': _enable_disable, 'maintenance_mode': _enable_disable},
    'anyOf': [{'required': ['status']}, {'required': ['maintenance_mode']}],
    'additionalProperties': False,
}

# Unknown parameters are dropped, never refused: the API went away at 2.43, before
# 2.75 made other lists strict.
index_query = {
    'type': 'object',
    'properties': {'zone': pt.multi_params({'type': 'string'})},
    'additionalProperties': True,
}

# The show and power action routes take no parameters and ignore any.
no_query: dict = {'type': 'object', 'additionalProperties': True}
