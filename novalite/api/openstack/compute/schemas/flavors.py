"""Schemas of the flavor API: create (flavor-manage) and the list query strings."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

VALID_SORT_KEYS = ['created_at', 'description', 'disabled', 'ephemeral_gb', 'flavorid', 'id',
                   'is_public', 'memory_mb', 'name', 'root_gb', 'rxtx_factor', 'swap',
                   'updated_at', 'vcpu_weight', 'vcpus']

create = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'id': {'type': ['string', 'number', 'null'], 'minLength': 1,
                       'maxLength': 255, 'pattern': r'^(?! )[a-zA-Z0-9. _-]+(?<! )$'},
                'ram': pt.flavor_param_positive,
                'vcpus': pt.flavor_param_positive,
                'disk': pt.flavor_param_non_negative,
                'OS-FLV-EXT-DATA:ephemeral': pt.flavor_param_non_negative,
                'swap': pt.flavor_param_non_negative,
                'rxtx_factor': {'type': ['number', 'string'],
                                'pattern': r'^[0-9]+(\.[0-9]+)?$', 'minimum': 0,
                                'exclusiveMinimum': True, 'maximum': 3.40282e+38},
                'os-flavor-access:is_public': pt.boolean,
            },
            'required': ['name', 'ram', 'vcpus', 'disk'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}

# A flavor's description is a TEXT column: up to 64 KiB, not a server's 255 characters.
_description = dict(pt.description, maxLength=65535)

create_v255 = pt.extended(create, 'flavor', add={'description': _description})
# 2.102 drops the deprecated rxtx_factor from the API.
create_v2102 = pt.extended(create_v255, 'flavor', remove=('rxtx_factor',))

update_v255 = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {'description': _description},
            'required': ['description'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}

index_query = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.non_negative_integer),
        'marker': pt.multi_params({'type': 'string'}),
        'is_public': pt.multi_params({'type': 'string'}),
        'minRam': pt.multi_params({'type': 'string'}),
        'minDisk': pt.multi_params({'type': 'string'}),
        'sort_key': pt.multi_params({'type': 'string', 'enum': VALID_SORT_KEYS}),
        'sort_dir': pt.multi_params(pt.sort_dir),
    },
    # Before 2.75 unknown parameters are ignored; from 2.75 they are an error.
    'additionalProperties': True,
}

index_query_275 = dict(index_query, additionalProperties=False)

# 2.102: a ``name`` filter (a regular expression, as for servers); rxtx_factor is no
# longer a sort key.
index_query_v2102 = pt.extended(index_query_275, add={
    'name': pt.multi_params({'type': 'string'}),
    'sort_key': pt.multi_params({'type': 'string', 'enum': [
        key for key in VALID_SORT_KEYS if key != 'rxtx_factor']}),
})

show_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
show_query_v2102 = dict(show_query, additionalProperties=False)
