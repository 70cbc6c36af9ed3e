"""Schemas of the os-instance-actions list query string."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

list_query_params_v258 = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.non_negative_integer),
        'marker': pt.multi_params({'type': 'string'}),
        'changes-since': pt.multi_params({'type': 'string', 'format': 'date-time'}),
    },
    'additionalProperties': True,
}

list_query_params_v266 = pt.extended(list_query_params_v258, add={
    'changes-before': pt.multi_params({'type': 'string', 'format': 'date-time'})})
