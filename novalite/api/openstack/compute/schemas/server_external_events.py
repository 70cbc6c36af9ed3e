"""Schemas of os-server-external-events: which event names each microversion accepts."""
from __future__ import annotations

import copy

from novalite.api.validation import parameter_types as pt

create = {
    'type': 'object',
    'properties': {
        'events': {
            'type': 'array', 'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'server_uuid': pt.uuid,
                    'name': {'type': 'string', 'enum': [
                        'network-changed', 'network-vif-plugged',
                        'network-vif-unplugged', 'network-vif-deleted']},
                    'status': {'type': 'string',
                               'enum': ['failed', 'completed', 'in-progress']},
                    'tag': {'type': 'string', 'maxLength': 255},
                },
                'required': ['server_uuid', 'name'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['events'],
    'additionalProperties': False,
}


def _with_names(schema: dict, *names: str) -> dict:
    new = copy.deepcopy(schema)
    new['properties']['events']['items']['properties']['name']['enum'] += list(names)
    return new


create_v251 = _with_names(create, 'volume-extended')
create_v276 = _with_names(create_v251, 'power-update')
create_v282 = _with_names(create_v276, 'accelerator-request-bound')
create_v293 = _with_names(create_v282, 'volume-reimaged')
