"""Schemas of the rebuild and createImage server actions, per microversion."""
from __future__ import annotations

from novalite.api.openstack.compute.schemas import servers as servers_schema
from novalite.api.validation import parameter_types as pt

# What the action dispatcher checks; the handler then checks the microversion's schema.
any_rebuild = {'type': 'object', 'properties': {'rebuild': {'type': 'object'}},
               'required': ['rebuild']}

rebuild = {
    'type': 'object',
    'properties': {
        'rebuild': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'imageRef': pt.image_ref,
                'adminPass': {'type': 'string'},
                'metadata': pt.metadata,
                'preserve_ephemeral': pt.boolean,
                'OS-DCF:diskConfig': servers_schema.disk_config,
                'accessIPv4': pt.ipv4,
                'accessIPv6': pt.ipv6,
                'personality': servers_schema._personality,
            },
            'required': ['imageRef'],
            'additionalProperties': False,
        },
    },
    'required': ['rebuild'],
    'additionalProperties': False,
}

rebuild_v219 = pt.extended(rebuild, 'rebuild', add={'description': pt.description})

# 2.54: the key pair can be changed, or removed with null.
rebuild_v254 = pt.extended(rebuild_v219, 'rebuild', add={'key_name': {
    'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255}})

# 2.57: user data can be changed (null removes it); files are no longer injected.
rebuild_v257 = pt.extended(rebuild_v254, 'rebuild', add={'user_data': {
    'type': ['string', 'null'], 'format': 'base64', 'maxLength': 65535}},
    remove=('personality',))

rebuild_v263 = pt.extended(rebuild_v257, 'rebuild', add={'trusted_image_certificates': {
    'type': ['array', 'null'], 'minItems': 1, 'maxItems': 50, 'uniqueItems': True,
    'items': {'type': 'string', 'minLength': 1}}})

rebuild_v290 = pt.extended(rebuild_v263, 'rebuild',
                           add={'hostname': servers_schema._hostname})

rebuild_v294 = pt.extended(rebuild_v290, 'rebuild',
                           add={'hostname': servers_schema._hostname_v294})

# (first microversion, schema), newest first.
REBUILD_BY_VERSION = (('2.94', rebuild_v294), ('2.90', rebuild_v290),
                      ('2.63', rebuild_v263), ('2.57', rebuild_v257),
                      ('2.54', rebuild_v254), ('2.19', rebuild_v219), ('2.1', rebuild))

create_image = {
    'type': 'object',
    'properties': {
        'createImage': {
            'type': 'object',
            'properties': {'name': pt.name, 'metadata': pt.metadata},
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['createImage'],
    'additionalProperties': False,
}

create_backup = {
    'type': 'object',
    'properties': {
        'createBackup': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'backup_type': {'type': 'string'},
                'rotation': pt.non_negative_integer,
                'metadata': pt.metadata,
            },
            'required': ['name', 'backup_type', 'rotation'],
            'additionalProperties': False,
        },
    },
    'required': ['createBackup'],
    'additionalProperties': False,
}
