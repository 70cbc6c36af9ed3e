"""Schemas of the os-hypervisors query strings, per microversion."""
from __future__ import annotations

import copy

from novalite.api.validation import parameter_types as pt

list_query_v233 = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.positive_integer),
        'marker': pt.multi_params({'type': 'string'}),
    },
    'additionalProperties': True,
}

# 2.53: markers are uuids; filter by host name pattern and embed the servers.
list_query_v253 = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.positive_integer),
        'marker': pt.multi_params(pt.uuid),
        'hypervisor_hostname_pattern': pt.multi_params({'type': 'string'}),
        'with_servers': pt.multi_params(pt.boolean),
    },
    'additionalProperties': True,
}
list_query_v275 = dict(copy.deepcopy(list_query_v253), additionalProperties=False)

show_query_v253 = {
    'type': 'object',
    'properties': {'with_servers': pt.multi_params(pt.boolean)},
    'additionalProperties': True,
}
show_query_v275 = dict(copy.deepcopy(show_query_v253), additionalProperties=False)
