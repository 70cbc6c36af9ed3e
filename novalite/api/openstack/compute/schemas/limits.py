"""Schemas of the limits API query string."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

index_query = {
    'type': 'object',
    'properties': {
        'tenant_id': pt.multi_params({'type': 'string'}),
        # Accepted and ignored, as Nova does.
    },
    'additionalProperties': True,
}

# From 2.75 unknown parameters are refused.
index_query_v275 = dict(index_query, additionalProperties=False)
