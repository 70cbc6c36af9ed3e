"""Schemas of the shelve, shelveOffload and unshelve server actions."""
from __future__ import annotations

from novalite.api.openstack.compute.schemas import servers as servers_schema
from novalite.api.validation import parameter_types as pt

# The values of shelve and shelveOffload are ignored (clients send null).
shelve = {'type': 'object', 'properties': {'shelve': {}}, 'required': ['shelve']}
shelve_offload = {'type': 'object', 'properties': {'shelveOffload': {}},
                  'required': ['shelveOffload']}

# Before 2.77 the value of unshelve is ignored.
unshelve = {'type': 'object', 'properties': {'unshelve': {}}, 'required': ['unshelve']}

# 2.77: null, or a zone to unshelve into.
unshelve_v277 = {
    'type': 'object',
    'properties': {'unshelve': {'oneOf': [
        {'type': 'object', 'properties': {'availability_zone': pt.name},
         'required': ['availability_zone'], 'additionalProperties': False},
        {'type': 'null'},
    ]}},
    'required': ['unshelve'],
    'additionalProperties': False,
}

# 2.91: a zone (null unpins the server from its zone) and/or a host.
unshelve_v291 = {
    'type': 'object',
    'properties': {'unshelve': {'oneOf': [
        {'type': 'object',
         'properties': {'availability_zone': {'oneOf': [{'type': 'null'}, pt.name]},
                        'host': servers_schema._hostname_v294},
         'minProperties': 1, 'additionalProperties': False},
        {'type': 'null'},
    ]}},
    'required': ['unshelve'],
    'additionalProperties': False,
}
