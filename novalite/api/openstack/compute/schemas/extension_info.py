"""Schemas of the extensions API query strings."""
from __future__ import annotations

# Nothing to filter by; unknown parameters are ignored until 2.102, refused from it.
index_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}
index_query_v2102 = dict(index_query, additionalProperties=False)

show_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}
show_query_v2102 = dict(show_query, additionalProperties=False)
