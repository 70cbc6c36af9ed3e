"""Schema of os-resetState: the state an admin puts a server in."""
from __future__ import annotations

reset_state = {
    'type': 'object',
    'properties': {
        'os-resetState': {
            'type': 'object',
            'properties': {'state': {'type': 'string', 'enum': ['active', 'error']}},
            'required': ['state'],
            'additionalProperties': False,
        },
    },
    'required': ['os-resetState'],
    'additionalProperties': False,
}
