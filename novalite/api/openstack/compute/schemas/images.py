"""Query schemas of the images proxy: Nova never checked the filters' values, only
the paging parameters; ``property-<name>`` filters pass through."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_positive = pt.multi_params(pt.positive_integer)

index_query: dict = {
    'type': 'object',
    'properties': {
        'name': {}, 'status': {}, 'changes-since': {}, 'server': {}, 'type': {},
        'minRam': {}, 'minDisk': {},
        'limit': _positive, 'page_size': _positive, 'marker': {}, 'offset': _positive,
    },
    'patternProperties': {'^property-.*$': {}},
    'additionalProperties': True,
}

show_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
