"""Schemas of a server's volume attachments (os-volume_attachments), as Nova's."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_volume_id = pt.uuid
# A device path as Nova's block device code matches it (/dev/vdb, /dev/xvdc, ...).
_device = {'type': ['string', 'null'],
           'pattern': '(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$'}

index_query = {
    'type': 'object',
    'properties': {'limit': pt.multi_params(pt.non_negative_integer),
                   'offset': pt.multi_params(pt.non_negative_integer)},
    # Unknown parameters dropped before 2.75, refused from it.
    'additionalProperties': True,
}
index_query_v275 = {**index_query, 'additionalProperties': False}

show_query = {'type': 'object', 'properties': {}, 'additionalProperties': True}


def _attachment(properties: dict) -> dict:
    return {
        'type': 'object',
        'properties': {
            'volumeAttachment': {'type': 'object', 'properties': properties,
                                 'required': ['volumeId'], 'additionalProperties': False},
        },
        'required': ['volumeAttachment'],
        'additionalProperties': False,
    }


create = _attachment({'volumeId': _volume_id, 'device': _device})
create_v249 = _attachment({'volumeId': _volume_id, 'device': _device, 'tag': pt.tag})
create_v279 = _attachment({'volumeId': _volume_id, 'device': _device, 'tag': pt.tag,
                           'delete_on_termination': pt.boolean})

update = _attachment({'volumeId': _volume_id})
# 2.85: the body may repeat what GET shows, though only some of it may change.
update_v285 = _attachment({'volumeId': _volume_id, 'device': _device, 'tag': pt.tag,
                           'delete_on_termination': pt.boolean, 'serverId': pt.uuid,
                           'id': pt.uuid})
