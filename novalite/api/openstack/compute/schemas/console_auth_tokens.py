"""The query string of GET /os-console-auth-tokens/{token}: none, unknown parameters
dropped until 2.98 and refused from 2.99, as Nova 34."""
from __future__ import annotations

show_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
show_query_v299: dict = {'type': 'object', 'properties': {}, 'additionalProperties': False}
