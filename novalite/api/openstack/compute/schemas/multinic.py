"""Schemas of the addFixedIp and removeFixedIp server actions (until 2.43)."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

add_fixed_ip = {
    'type': 'object',
    'properties': {
        'addFixedIp': {
            'type': 'object',
            'properties': {
                # Nova keeps nova-network's type: a string or a number, as long as a uuid.
                'networkId': {'type': ['string', 'number'], 'minLength': 1,
                              'maxLength': 36},
            },
            'required': ['networkId'],
            'additionalProperties': False,
        },
    },
    'required': ['addFixedIp'],
    'additionalProperties': False,
}

remove_fixed_ip = {
    'type': 'object',
    'properties': {
        'removeFixedIp': {
            'type': 'object',
            'properties': {'address': pt.ip_address},
            'required': ['address'],
            'additionalProperties': False,
        },
    },
    'required': ['removeFixedIp'],
    'additionalProperties': False,
}
