"""Bodies of POST /servers/{id}/remote-consoles and of the legacy console actions.

As Nova's: the enums keep the console types Nova no longer serves (xvpvnc, rdp) so that
they answer Nova's 400 from the controller or the host, not a schema error.
"""
from __future__ import annotations

import copy


def _action(key: str, types: list[str]) -> dict:
    return {
        'type': 'object',
        'properties': {
            key: {
                'type': 'object',
                'properties': {'type': {'type': 'string', 'enum': types}},
                'required': ['type'],
                'additionalProperties': False,
            },
        },
        'required': [key],
        'additionalProperties': False,
    }


get_vnc_console = _action('os-getVNCConsole', ['novnc', 'xvpvnc'])
get_spice_console = _action('os-getSPICEConsole', ['spice-html5'])
get_serial_console = _action('os-getSerialConsole', ['serial'])
# Nova takes any body: the action answers 400 whatever it is.
get_rdp_console: dict = {}

create_v26: dict = {
    'type': 'object',
    'properties': {
        'remote_console': {
            'type': 'object',
            'properties': {
                'protocol': {'type': 'string', 'enum': ['vnc', 'spice', 'serial', 'rdp']},
                'type': {'type': 'string',
                         'enum': ['novnc', 'xvpvnc', 'spice-html5', 'serial', 'rdp-html5']},
            },
            'required': ['protocol', 'type'],
            'additionalProperties': False,
        },
    },
    'required': ['remote_console'],
    'additionalProperties': False,
}

create_v28 = copy.deepcopy(create_v26)
create_v28['properties']['remote_console']['properties']['protocol']['enum'].append('mks')
create_v28['properties']['remote_console']['properties']['type']['enum'].append('webmks')

create_v299 = copy.deepcopy(create_v28)
create_v299['properties']['remote_console']['properties']['type']['enum'].append(
    'spice-direct')
