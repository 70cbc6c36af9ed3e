"""Schemas of the os-migrations query strings, per microversion."""
from __future__ import annotations

import copy
from typing import Any

from novalite.api.validation import parameter_types as pt


def _single(schema: dict) -> dict:
    """A query parameter given at most once."""
    return {'type': 'array', 'items': schema, 'maxItems': 1}


_ANY = pt.multi_params({'type': 'string'})

list_query_v20: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'hidden': _ANY,
        'host': _ANY,
        'instance_uuid': _ANY,
        'source_compute': _ANY,
        'status': _ANY,
        'migration_type': _ANY,
    },
    # Unknown parameters were ignored until 2.59.
    'additionalProperties': True,
}

# 2.59: paging by limit and marker (a migration uuid), changes-since; strict.
list_query_v259 = copy.deepcopy(list_query_v20)
list_query_v259['properties'].update({
    'limit': _single(pt.non_negative_integer),
    'marker': _single({'type': 'string'}),
    'changes-since': _single({'type': 'string', 'format': 'date-time'}),
})
list_query_v259['additionalProperties'] = False

list_query_v266 = copy.deepcopy(list_query_v259)
list_query_v266['properties']['changes-before'] = _single(
    {'type': 'string', 'format': 'date-time'})

# 2.80: filter by the user and project that started the move.
list_query_v280 = copy.deepcopy(list_query_v266)
list_query_v280['properties'].update({
    'user_id': _single({'type': 'string'}),
    'project_id': _single({'type': 'string'}),
})
