"""Schemas of the os-instance_usage_audit_log API: no parameters (ignored until 2.101,
refused from 2.102)."""
from __future__ import annotations

index_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
index_query_v2102: dict = dict(index_query, additionalProperties=False)
show_query = index_query
show_query_v2102 = index_query_v2102
