"""Schemas of the os-floating-ips proxy and the addFloatingIp and removeFloatingIp
server actions."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

# novaclient sends {"pool": null} for the default pool; some clients send no body.
create = {
    'type': ['object', 'null'],
    'properties': {'pool': {'type': ['string', 'null']}},
    'additionalProperties': True,
}

add_floating_ip = {
    'type': 'object',
    'properties': {
        'addFloatingIp': {
            'type': 'object',
            'properties': {'address': pt.ip_address, 'fixed_address': pt.ip_address},
            'required': ['address'],
            'additionalProperties': False,
        },
    },
    'required': ['addFloatingIp'],
    'additionalProperties': False,
}

remove_floating_ip = {
    'type': 'object',
    'properties': {
        'removeFloatingIp': {
            'type': 'object',
            'properties': {'address': pt.ip_address},
            'required': ['address'],
            'additionalProperties': False,
        },
    },
    'required': ['removeFloatingIp'],
    'additionalProperties': False,
}

index_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
show_query = index_query
