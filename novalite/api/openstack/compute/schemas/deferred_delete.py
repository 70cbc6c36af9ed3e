"""Schemas of restore and forceDelete (their value is ignored)."""
from __future__ import annotations

restore = {'type': 'object', 'properties': {'restore': {}}, 'required': ['restore'],
           'additionalProperties': False}
force_delete = {'type': 'object', 'properties': {'forceDelete': {}},
                'required': ['forceDelete'], 'additionalProperties': False}
