"""Schemas of the servers API: create per microversion and the list query string."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt

_network = {
    'type': 'object',
    'properties': {
        'fixed_ip': pt.ip_address,
        'port': {'oneOf': [pt.uuid, {'type': 'null'}]},
        'uuid': {'type': 'string'},
    },
    'additionalProperties': False,
}

_personality = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {'path': {'type': 'string'},
                       'contents': {'type': 'string', 'format': 'base64'}},
        'additionalProperties': False,
    },
}

_scheduler_hints = {
    'type': 'object',
    'properties': {
        'group': pt.uuid,
        'different_host': {'oneOf': [pt.uuid, {'type': 'array', 'items': pt.uuid}]},
        'same_host': {'oneOf': [pt.uuid, {'type': 'array', 'items': pt.uuid}]},
        'query': {'type': ['string', 'object']},
        'target_cell': pt.name,
        'build_near_host_ip': pt.ip_address,
        'cidr': {'type': 'string', 'pattern': '^/[0-9a-f.:]+$'},
    },
    # Out-of-tree scheduler filters read hints of their own.
    'additionalProperties': True,
}

# Block device mapping v2, as clients send it (openstackclient always sends the image as
# a local boot disk). The controller accepts only what needs no Block Storage service.
_block_device_mapping_v2 = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {
            'source_type': {'type': 'string',
                            'enum': ['volume', 'image', 'snapshot', 'blank']},
            'destination_type': {'type': 'string', 'enum': ['local', 'volume']},
            'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                     'pattern': '^[a-zA-Z0-9._-]*$'},
            'image_id': pt.uuid,
            'boot_index': {'type': ['integer', 'string', 'null'],
                           'pattern': '^-?[0-9]+$'},
            'delete_on_termination': pt.boolean,
            'device_name': {'type': ['string', 'null'], 'maxLength': 255},
            'device_type': {'type': ['string', 'null'], 'maxLength': 255},
            'disk_bus': {'type': ['string', 'null'], 'maxLength': 255},
            'guest_format': {'type': ['string', 'null'], 'maxLength': 255},
            'volume_size': {'type': ['integer', 'string', 'null'],
                            'pattern': '^[0-9]+$'},
            'volume_type': {'type': ['string', 'null'], 'maxLength': 255},
            'no_device': {},
            'tag': {'type': 'string', 'maxLength': 60},
        },
        'additionalProperties': False,
    },
}

_security_groups = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {'name': {'type': 'string', 'minLength': 1, 'maxLength': 255}},
        'additionalProperties': False,
    },
}

create = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'imageRef': pt.image_ref,
                'flavorRef': pt.resource_ref,
                'adminPass': {'type': 'string'},
                'metadata': pt.metadata,
                'networks': {'type': 'array', 'items': _network},
                'min_count': pt.positive_integer,
                'max_count': pt.positive_integer,
                'return_reservation_id': pt.boolean,
                'key_name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
                'user_data': {'type': 'string', 'format': 'base64', 'maxLength': 65535},
                'availability_zone': pt.name,
                'accessIPv4': pt.ipv4,
                'accessIPv6': pt.ipv6,
                'config_drive': pt.boolean,
                'personality': _personality,
                'block_device_mapping_v2': _block_device_mapping_v2,
                'security_groups': _security_groups,
            },
            'required': ['name', 'flavorRef'],
            'additionalProperties': False,
        },
        'os:scheduler_hints': _scheduler_hints,
        'OS-SCH-HNT:scheduler_hints': _scheduler_hints,
    },
    'required': ['server'],
    'additionalProperties': False,
}

create_v219 = pt.extended(create, 'server', add={'description': pt.description})

create_v237 = pt.extended(create_v219, 'server', add={'networks': {'oneOf': [
    {'type': 'array', 'items': _network},
    {'type': 'string', 'enum': ['none', 'auto']},
]}}, required=('networks',))

create_v252 = pt.extended(create_v237, 'server', add={'tags': pt.tags})

create_v257 = pt.extended(create_v252, 'server', remove=('personality',))

create_v290 = pt.extended(create_v257, 'server', add={'hostname': {
    'type': 'string', 'minLength': 2, 'maxLength': 63,
    'pattern': '^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$'}})

create_v294 = pt.extended(create_v290, 'server', add={'hostname': {
    'type': 'string', 'minLength': 2, 'maxLength': 255,
    'pattern': r'^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$'}})

VALID_SORT_KEYS = ['access_ip_v4', 'access_ip_v6', 'auto_disk_config', 'availability_zone',
                   'config_drive', 'created_at', 'display_description', 'display_name',
                   'host', 'hostname', 'image_ref', 'instance_type_id', 'kernel_id',
                   'key_name', 'launch_index', 'launched_at', 'locked_by', 'node',
                   'power_state', 'progress', 'project_id', 'ramdisk_id', 'root_device_name',
                   'task_state', 'terminated_at', 'updated_at', 'user_id', 'uuid', 'vm_state']

# Sort keys that reveal where servers run: administrators only.
ADMIN_ONLY_SORT_KEYS = ['host', 'node']

_string = pt.multi_params({'type': 'string'})

query_params = {
    'type': 'object',
    'properties': {
        'limit': pt.multi_params(pt.non_negative_integer),
        'marker': _string,
        'sort_key': pt.multi_params({'type': 'string', 'enum': VALID_SORT_KEYS}),
        'sort_dir': pt.multi_params(pt.sort_dir),
        'name': _string,
        'status': _string,
        'image': _string,
        'flavor': _string,
        'host': _string,
        'node': _string,
        'reservation_id': _string,
        'changes-since': pt.multi_params({'type': 'string', 'format': 'date-time'}),
        'all_tenants': _string,
        'project_id': _string,
        'tenant_id': _string,
        'user_id': _string,
        'tags': _string,
        'not-tags': _string,
        'deleted': _string,
        'uuid': _string,
        'availability_zone': _string,
        'key_name': _string,
    },
    # Before 2.75 unknown parameters are dropped; from 2.75 they are an error.
    'additionalProperties': True,
}

query_params_v266 = pt.extended(query_params, add={
    'changes-before': pt.multi_params({'type': 'string', 'format': 'date-time'})})

query_params_v275 = dict(query_params_v266, additionalProperties=False)
