"""Schemas of POST /servers/{id}/action: reboot, os-stop, os-start, os-getConsoleOutput."""
from __future__ import annotations


def _action(name: str, value: dict) -> dict:
    return {'type': 'object', 'properties': {name: value}, 'required': [name],
            'additionalProperties': False}


# Any one action: the controller then checks the body against that action's schema.
action = {'type': 'object', 'minProperties': 1, 'maxProperties': 1}

# Nova accepts the type in any of these spellings.
reboot = _action('reboot', {
    'type': 'object',
    'properties': {'type': {'type': 'string',
                            'enum': ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']}},
    'required': ['type'],
    'additionalProperties': False,
})

# The value of os-stop and os-start is ignored (clients send null or {}).
stop = _action('os-stop', {})
start = _action('os-start', {})

# length: how many lines from the end; -1 or absent for all of them.
get_console_output = _action('os-getConsoleOutput', {
    'type': 'object',
    'properties': {'length': {'type': ['integer', 'string', 'null'],
                              'pattern': '^-?[0-9]+$', 'minimum': -1}},
    'additionalProperties': False,
})
