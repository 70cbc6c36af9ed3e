"""Schemas of a server's password (os-server-password): the query string only."""
from __future__ import annotations

index_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}
index_query_v2102 = {**index_query, 'additionalProperties': False}
