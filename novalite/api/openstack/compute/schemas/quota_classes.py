"""Schemas of the os-quota-class-sets update body, per microversion."""
from __future__ import annotations

from novalite.api.openstack.compute.schemas.quota_sets import limit
from novalite.api.validation import parameter_types as pt
from novalite.quota import INJECTED_FILE_RESOURCES, NETWORK_RESOURCES, RESOURCES

update = {
    'type': 'object',
    'properties': {
        'quota_class_set': {
            'type': 'object',
            # The server group limits are taken (and stored) before 2.50 too, as in
            # Nova; only the views before 2.50 leave them out.
            'properties': {name: limit for name in RESOURCES},
            'additionalProperties': False,
        },
    },
    'required': ['quota_class_set'],
    'additionalProperties': False,
}

# 2.50 trades the nova-network quotas for the server group ones; 2.57 drops the
# injected file quotas.
update_v250 = pt.extended(update, 'quota_class_set', remove=NETWORK_RESOURCES)
update_v257 = pt.extended(update_v250, 'quota_class_set', remove=INJECTED_FILE_RESOURCES)
