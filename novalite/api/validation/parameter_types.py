"""Reusable JSON-Schema fragments of request parameters."""
from __future__ import annotations

import copy
from typing import Any

MAX_INT = 2147483647

# Nova's spellings, no more: strutils would take 'y' or 't' too, Nova's schema does not.
_TRUE = [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes']
_FALSE = [False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']

boolean: dict[str, Any] = {'type': ['boolean', 'string'], 'enum': _TRUE + _FALSE}

positive_integer = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$', 'minimum': 1,
                    'minLength': 1}

non_negative_integer = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$', 'minimum': 0,
                        'minLength': 1}

# Names of servers, flavors, zones: printable, no whitespace at the ends.
name = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'format': 'name'}

description = {'type': ['string', 'null'], 'minLength': 0, 'maxLength': 255,
               'pattern': r'^[\x20-\x7E\u00A0-\uFFFF\s]*$'}

uuid = {'type': 'string', 'format': 'uuid'}

# A host name as the move actions and aggregates take it (Nova's fqdn).
hostname = {'type': 'string', 'minLength': 1, 'maxLength': 255,
            'pattern': '^[a-zA-Z0-9-._]*$'}

# An id, or a URL whose last path segment is the id.
resource_ref = {'type': ['string', 'integer'], 'minLength': 1, 'maxLength': 1024}

# An image by its id (Nova 34 takes no image URL); empty on create means boot from volume.
image_ref = {'type': 'string', 'format': 'uuid'}
image_ref_or_empty = {'oneOf': [image_ref, {'type': 'string', 'maxLength': 0}]}

metadata = {
    'type': 'object',
    'patternProperties': {
        '^[a-zA-Z0-9-_:. ]{1,255}$': {'type': 'string', 'maxLength': 255},
    },
    'additionalProperties': False,
}

tag = {'type': 'string', 'minLength': 1, 'maxLength': 60, 'pattern': '^[^,/]*$'}

MAX_TAGS = 50

tags = {'type': 'array', 'items': tag, 'maxItems': MAX_TAGS}

ipv4 = {'type': 'string', 'format': 'ipv4'}
ipv6 = {'type': 'string', 'format': 'ipv6'}
ip_address = {'type': 'string', 'oneOf': [{'format': 'ipv4'}, {'format': 'ipv6'}]}

flavor_param_positive = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$',
                         'minimum': 1, 'maximum': MAX_INT}
flavor_param_non_negative = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$',
                             'minimum': 0, 'maximum': MAX_INT}

sort_dir = {'type': 'string', 'enum': ['asc', 'desc']}


def multi_params(schema: dict) -> dict:
    """A query parameter: the validator sees every query value as a list of strings."""
    return {'type': 'array', 'items': schema}


def extended(schema: dict, *path: str, add: dict | None = None,
             remove: tuple[str, ...] = (), required: tuple[str, ...] = ()) -> dict:
    """A deep copy of ``schema`` with properties added or removed at ``path``.

    ``path`` names nested ``properties`` keys, e.g. ``('server',)``; it is how the
    schema of one microversion is derived from the one before.
    """
    new = copy.deepcopy(schema)
    node: dict[str, Any] = new
    for key in path:
        node = node['properties'][key]
    node['properties'].update(copy.deepcopy(add or {}))
    for key in remove:
        node['properties'].pop(key, None)
        if key in node.get('required', []):
            node['required'].remove(key)
    if required:
        node['required'] = sorted(set(node.get('required', [])) | set(required))
    return new
