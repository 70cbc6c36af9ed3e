"""Schemas of os-interface: attaching a port or a network (one fixed IP), a device tag
from 2.49."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

create = {
    'type': 'object',
    'properties': {
        'interfaceAttachment': {
            'type': 'object',
            'properties': {
                'net_id': pt.uuid,
                'port_id': pt.uuid,
                'fixed_ips': {
                    'type': 'array', 'minItems': 1, 'maxItems': 1,
                    'items': {
                        'type': 'object',
                        'properties': {'ip_address': pt.ip_address},
                        'required': ['ip_address'],
                        'additionalProperties': False,
                    },
                },
            },
            'additionalProperties': False,
        },
    },
    'additionalProperties': False,
}

create_v249 = pt.extended(create, 'interfaceAttachment', add={'tag': pt.tag})
