"""Schemas of the os-services API: the list filters and the update bodies (the
host/binary actions before 2.53, the service's own fields from 2.53)."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

index_query = {
    'type': 'object',
    'properties': {
        'host': {'type': 'array', 'items': {'type': 'string'}},
        'binary': {'type': 'array', 'items': {'type': 'string'}},
    },
    'additionalProperties': True,
}

# From 2.75 unknown query parameters are refused instead of ignored.
index_query_275 = dict(index_query, additionalProperties=False)

# The host of a service, as Nova's ``fqdn`` parameter type.
_host = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'pattern': '^[a-zA-Z0-9-._]*$'}
_binary = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_reason = {'type': 'string', 'minLength': 1, 'maxLength': 255}

# PUT /os-services/{enable|disable|disable-log-reason} (and force-down from 2.11).
update = {
    'type': 'object',
    'properties': {'host': _host, 'binary': _binary, 'disabled_reason': _reason},
    'required': ['host', 'binary'],
    'additionalProperties': False,
}

update_v211 = {
    'type': 'object',
    'properties': {'host': _host, 'binary': _binary, 'disabled_reason': _reason,
                   'forced_down': pt.boolean},
    'required': ['host', 'binary'],
    'additionalProperties': False,
}

update_v253 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'forced_down': pt.boolean,
    },
    # No field is required: an empty body is the controller's 400 ("No updates were
    # requested"), as in Nova.
    'additionalProperties': False,
}
