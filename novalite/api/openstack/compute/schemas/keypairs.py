"""Schemas of the os-keypairs API: create per microversion and the query strings."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_name = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'format': 'name',
         'pattern': '^[a-zA-Z0-9 _-]+$'}
# 2.92 allows '@' and '.', so that names like "user@host.key" work.
_name_v292 = dict(_name, pattern=r'^[a-zA-Z0-9 @._-]+$')

create = {
    'type': 'object',
    'properties': {
        'keypair': {
            'type': 'object',
            'properties': {'name': _name, 'public_key': {'type': 'string'}},
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['keypair'],
    'additionalProperties': False,
}

create_v22 = pt.extended(create, 'keypair', add={
    'type': {'type': 'string', 'enum': ['ssh', 'x509']}})

create_v210 = pt.extended(create_v22, 'keypair', add={
    'user_id': {'type': 'string'}})

# From 2.92 the server never generates a key pair: the public key is required.
create_v292 = pt.extended(create_v210, 'keypair', add={'name': _name_v292},
                          required=('public_key',))

index_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}

index_query_v210 = {
    'type': 'object',
    'properties': {'user_id': pt.multi_params({'type': 'string'})},
    'additionalProperties': True,
}

index_query_v235 = pt.extended(index_query_v210, add={
    'limit': pt.multi_params(pt.non_negative_integer),
    'marker': pt.multi_params({'type': 'string'})})

index_query_v275 = dict(index_query_v235, additionalProperties=False)

show_query = index_query
show_query_v210 = index_query_v210
show_query_v275 = dict(show_query_v210, additionalProperties=False)
