"""Schemas of the os-simple-tenant-usage query strings, per microversion."""
from __future__ import annotations

import copy
from typing import Any

from novalite.api.validation import parameter_types as pt

_STRING = pt.multi_params({'type': 'string'})

index_query: dict[str, Any] = {
    'type': 'object',
    'properties': {'start': _STRING, 'end': _STRING, 'detailed': _STRING},
    'additionalProperties': True,
}
show_query: dict[str, Any] = {
    'type': 'object',
    'properties': {'start': _STRING, 'end': _STRING},
    'additionalProperties': True,
}

# 2.40: pages of servers, the marker being a server uuid.
_PAGING = {'limit': pt.multi_params(pt.non_negative_integer), 'marker': _STRING}
index_query_v240 = copy.deepcopy(index_query)
index_query_v240['properties'].update(_PAGING)
show_query_v240 = copy.deepcopy(show_query)
show_query_v240['properties'].update(_PAGING)

# 2.75: unknown parameters are refused.
index_query_v275 = dict(copy.deepcopy(index_query_v240), additionalProperties=False)
show_query_v275 = dict(copy.deepcopy(show_query_v240), additionalProperties=False)
