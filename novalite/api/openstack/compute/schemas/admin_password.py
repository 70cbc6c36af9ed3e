"""Schema of changePassword."""
from __future__ import annotations

change_password = {
    'type': 'object',
    'properties': {
        'changePassword': {
            'type': 'object',
            'properties': {'adminPass': {'type': 'string'}},
            'required': ['adminPass'],
            'additionalProperties': False,
        },
    },
    'required': ['changePassword'],
    'additionalProperties': False,
}
