"""Schemas of the pause and unpause server actions (their value is ignored)."""
from __future__ import annotations

pause = {'type': 'object', 'properties': {'pause': {}}, 'required': ['pause'],
         'additionalProperties': False}
unpause = {'type': 'object', 'properties': {'unpause': {}}, 'required': ['unpause'],
           'additionalProperties': False}
