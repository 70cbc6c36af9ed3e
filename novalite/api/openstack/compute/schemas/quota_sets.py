"""Schemas of the os-quota-sets API: the update body per microversion and the queries."""
from __future__ import annotations

import copy

from novalite.api.validation import parameter_types as pt
from novalite.quota import INJECTED_FILE_RESOURCES, NETWORK_RESOURCES, RESOURCES

# A limit: -1 (unlimited) or more, as an integer or a string of one.
limit = {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'minimum': -1,
         'maximum': pt.MAX_INT}

_all_limits = {name: limit for name in RESOURCES}

update = {
    'type': 'object',
    'properties': {
        'quota_set': {
            'type': 'object',
            'properties': dict(_all_limits, force=pt.boolean),
            'additionalProperties': False,
        },
    },
    'required': ['quota_set'],
    'additionalProperties': False,
}

# 2.36 drops the nova-network quotas, 2.57 the injected file ones.
update_v236 = pt.extended(update, 'quota_set', remove=NETWORK_RESOURCES)
update_v257 = pt.extended(update_v236, 'quota_set', remove=INJECTED_FILE_RESOURCES)

query = {
    'type': 'object',
    'properties': {'user_id': pt.multi_params({'type': 'string'})},
    'additionalProperties': True,
}
query_v275 = dict(copy.deepcopy(query), additionalProperties=False)

# Unknown parameters are ignored at every version: Nova 34 defines a strict 2.102
# variant but does not use it.
defaults_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}
