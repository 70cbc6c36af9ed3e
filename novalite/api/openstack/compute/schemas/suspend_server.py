"""Schemas of the suspend and resume server actions (their value is ignored)."""
from __future__ import annotations

suspend = {'type': 'object', 'properties': {'suspend': {}}, 'required': ['suspend'],
           'additionalProperties': False}
resume = {'type': 'object', 'properties': {'resume': {}}, 'required': ['resume'],
          'additionalProperties': False}
