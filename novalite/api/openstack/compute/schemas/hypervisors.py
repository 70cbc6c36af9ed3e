"""Schemas of the os-hypervisors query strings, per microversion."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

list_query_v233 = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.non_negative_integer),
        'marker': pt.multi_params({'type': 'string'}),
    },
    'additionalProperties': True,
}


def _single(schema: dict) -> dict:
    """A query parameter given at most once."""
    return dict(pt.multi_params(schema), maxItems=1)


# 2.53: filter by host name pattern and embed the servers; each parameter once, and
# unknown ones are a 400 (from 2.53, not 2.75).
list_query_v253 = {
    'type': 'object',
    'properties': {
        'limit': _single(pt.non_negative_integer),
        'marker': _single({'type': 'string'}),
        'hypervisor_hostname_pattern': _single({
            'type': 'string', 'minLength': 1, 'maxLength': 255,
            'pattern': '^[a-zA-Z0-9-._]*$'}),
        'with_servers': _single(pt.boolean),
    },
    'additionalProperties': False,
}

show_query_v253 = {
    'type': 'object',
    'properties': {'with_servers': _single(pt.boolean)},
    'additionalProperties': False,
}
