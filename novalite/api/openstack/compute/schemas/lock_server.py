"""Schemas of the lock and unlock server actions."""
from __future__ import annotations

# Before 2.73 the value is ignored (clients send null).
lock = {'type': 'object', 'properties': {'lock': {}}, 'required': ['lock'],
        'additionalProperties': False}

# 2.73: null, or an object that may give the reason of the lock.
lock_v2_73 = {
    'type': 'object',
    'properties': {
        'lock': {
            'type': ['object', 'null'],
            'properties': {
                'locked_reason': {'type': 'string', 'minLength': 1, 'maxLength': 255},
            },
            'additionalProperties': False,
        },
    },
    'required': ['lock'],
    'additionalProperties': False,
}

unlock = {'type': 'object', 'properties': {'unlock': {}}, 'required': ['unlock'],
          'additionalProperties': False}
