"""Schemas of the os-instance-actions list query string."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt


def _single(schema: dict) -> dict:
    """A query parameter given at most once."""
    return dict(pt.multi_params(schema), maxItems=1)


# 2.58: paging and changes-since, each once; unknown parameters are a 400 from here.
list_query_params_v258 = {
    'type': 'object',
    'properties': {
        'limit': _single(pt.non_negative_integer),
        'marker': _single({'type': 'string'}),
        'changes-since': _single({'type': 'string', 'format': 'date-time'}),
    },
    'additionalProperties': False,
}

list_query_params_v266 = pt.extended(list_query_params_v258, add={
    'changes-before': _single({'type': 'string', 'format': 'date-time'})})
