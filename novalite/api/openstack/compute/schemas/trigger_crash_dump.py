"""Schema of trigger_crash_dump (2.17): its value must be null."""
from __future__ import annotations

trigger_crash_dump = {
    'type': 'object',
    'properties': {'trigger_crash_dump': {'type': 'null'}},
    'required': ['trigger_crash_dump'],
    'additionalProperties': False,
}
