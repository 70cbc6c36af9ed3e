"""Schemas of POST /servers/{server_id}/migrations/{id}/action (Nova's)."""
from __future__ import annotations

# Any one action: the controller then checks the body against that action's schema.
action: dict = {'type': 'object', 'minProperties': 1, 'maxProperties': 1}

# 2.22: the value must be null, as Nova's.
force_complete: dict = {
    'type': 'object',
    'properties': {'force_complete': {'type': 'null'}},
    'required': ['force_complete'],
    'additionalProperties': False,
}
