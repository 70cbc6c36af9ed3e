"""Schemas of the servers API: create per microversion and the list query string."""
from __future__ import annotations

from typing import Any

from novalite.api.validation import parameter_types as pt

_network: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'fixed_ip': pt.ip_address,
        'port': {'oneOf': [pt.uuid, {'type': 'null'}]},
        'uuid': {'type': 'string'},
    },
    'additionalProperties': False,
}
# Device tags on networks: 2.32, then lost in 2.33-2.41 and back from 2.42 (as Nova).
_tagged_network: dict[str, Any] = {**_network,
                                   'properties': {**_network['properties'], 'tag': pt.tag}}

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
        # A list too: the server view shows every hint as a list, and clients send
        # back what they were shown.
        'group': {'oneOf': [{'type': 'array', 'items': pt.uuid}, pt.uuid]},
        'different_host': {'oneOf': [pt.uuid, {'type': 'array', 'items': pt.uuid}]},
        # As Nova's: a plain string is not checked as a uuid, the items of a list are.
        'same_host': {'type': ['string', 'array'], 'items': pt.uuid},
        'query': {'type': ['string', 'object']},
        'target_cell': pt.name,
        'different_cell': {'type': ['string', 'array'], 'items': {'type': 'string'}},
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

disk_config = {'type': 'string', 'enum': ['AUTO', 'MANUAL']}

_security_groups = {
    'type': 'array',
    'items': {
        'type': 'object',
        'properties': {'name': pt.name},
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
                'imageRef': pt.image_ref_or_empty,
                'flavorRef': pt.resource_ref,
                'adminPass': {'type': 'string'},
                'metadata': pt.metadata,
                'networks': {'type': 'array', 'items': _network},
                'min_count': pt.positive_integer,
                'max_count': pt.positive_integer,
                'return_reservation_id': pt.boolean,
                'key_name': pt.name,
                'user_data': {'type': 'string', 'format': 'base64', 'maxLength': 65535},
                'availability_zone': pt.name,
                'accessIPv4': pt.ipv4,
                'accessIPv6': pt.ipv6,
                'config_drive': pt.boolean,
                'personality': _personality,
                'block_device_mapping_v2': _block_device_mapping_v2,
                'security_groups': _security_groups,
                'OS-DCF:diskConfig': disk_config,
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

# 2.32 to 2.36: networks may carry a tag (Nova's create_v232 and create_v233).
create_v232 = pt.extended(create_v219, 'server', add={
    'networks': {'type': 'array', 'items': _tagged_network}})

# From 2.37 a network's uuid must be a uuid.
_network_v237 = {**_network, 'properties': {**_network['properties'], 'uuid': pt.uuid}}
_tagged_network_v237 = {**_tagged_network,
                        'properties': {**_tagged_network['properties'], 'uuid': pt.uuid}}

create_v237 = pt.extended(create_v219, 'server', add={'networks': {'oneOf': [
    {'type': 'array', 'items': _network_v237},
    {'type': 'string', 'enum': ['none', 'auto']},
]}}, required=('networks',))

create_v242 = pt.extended(create_v237, 'server', add={'networks': {'oneOf': [
    {'type': 'array', 'items': _tagged_network_v237},
    {'type': 'string', 'enum': ['none', 'auto']},
]}})

create_v252 = pt.extended(create_v242, 'server', add={'tags': pt.tags})

create_v257 = pt.extended(create_v252, 'server', remove=('personality',))

# 2.63: trusted image certificates; accepted by the schema so the API can say clearly
# that novalite does not verify image signatures.
create_v263 = pt.extended(create_v257, 'server', add={'trusted_image_certificates': {
    'type': ['array', 'null'], 'minItems': 1, 'maxItems': 50, 'uniqueItems': True,
    'items': {'type': 'string', 'minLength': 1}}})

# 2.74: a host and/or hypervisor for administrators, checked by the scheduler.
create_v274 = pt.extended(create_v263, 'server', add={
    'host': pt.hostname, 'hypervisor_hostname': pt.hostname})

_hostname = {'type': 'string', 'minLength': 2, 'maxLength': 63,
             'pattern': '^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$'}
# 2.94: an FQDN, checked as loosely as Nova does (underscores, dots, dashes anywhere).
_hostname_v294 = pt.hostname

create_v290 = pt.extended(create_v274, 'server', add={'hostname': _hostname})

create_v294 = pt.extended(create_v290, 'server', add={'hostname': _hostname_v294})

# Sort keys accepted but ignored before 2.75 (Nova never sorted by them); 400 from 2.75.
IGNORED_SORT_KEYS = ['architecture', 'cell_name', 'cleaned', 'default_ephemeral_device',
                     'default_swap_device', 'deleted', 'deleted_at', 'disable_terminate',
                     'ephemeral_gb', 'ephemeral_key_uuid', 'id', 'key_data', 'launched_on',
                     'locked', 'memory_mb', 'os_type', 'reservation_id', 'root_gb',
                     'shutdown_terminate', 'user_data', 'vcpus', 'vm_mode']

VALID_SORT_KEYS = ['access_ip_v4', 'access_ip_v6', 'auto_disk_config', 'availability_zone',
                   'config_drive', 'created_at', 'display_description', 'display_name',
                   'host', 'hostname', 'image_ref', 'instance_type_id', 'kernel_id',
                   'key_name', 'launch_index', 'launched_at', 'locked_by', 'node',
                   'power_state', 'progress', 'project_id', 'ramdisk_id', 'root_device_name',
                   'task_state', 'terminated_at', 'updated_at', 'user_id', 'uuid', 'vm_state']

# Sort keys that reveal where servers run: administrators only.
ADMIN_ONLY_SORT_KEYS = ['host', 'node']

_string = pt.multi_params({'type': 'string'})
_regex = pt.multi_params({'type': 'string', 'format': 'regex'})
# Filters matched exactly by the database query.
_FILTERS = ('user_id', 'project_id', 'tenant_id', 'launch_index', 'image_ref', 'image',
            'vm_state', 'task_state', 'host', 'uuid', 'all_tenants', 'soft_deleted',
            'deleted', 'status', 'marker', 'sort_dir')
# Filters that are regular expressions: one that does not compile is a 400.
_REGEX_FILTERS = ('kernel_id', 'ramdisk_id', 'hostname', 'key_name', 'power_state', 'node',
                  'flavor', 'reservation_id', 'launched_at', 'terminated_at',
                  'availability_zone', 'name', 'display_name', 'description',
                  'display_description', 'locked_by', 'root_device_name', 'config_drive',
                  'access_ip_v4', 'access_ip_v6', 'auto_disk_config', 'progress', 'ip',
                  'ip6', 'created_at')
# Names of the instance's joined tables, and any name starting with "_": the schema
# takes them at every version and the list answers "Invalid filter field" (admins).
JOINED_TABLE_PARAMS = ('block_device_mapping', 'services', 'metadata', 'system_metadata',
                       'info_cache', 'security_groups', 'pci_devices')

query_params = {
    'type': 'object',
    'properties': dict(
        {key: _string for key in _FILTERS + JOINED_TABLE_PARAMS},
        **{key: _regex for key in _REGEX_FILTERS},
        limit=pt.multi_params(pt.non_negative_integer),
        sort_key=pt.multi_params({'type': 'string',
                                  'enum': VALID_SORT_KEYS + IGNORED_SORT_KEYS}),
        **{'changes-since': pt.multi_params({'type': 'string', 'format': 'date-time'})}),
    'patternProperties': {'^_': _string},
    # Before 2.75 unknown parameters are dropped; from 2.75 they are an error.
    'additionalProperties': True,
}

query_params_v226 = pt.extended(query_params, add={
    key: _regex for key in ('tags', 'tags-any', 'not-tags', 'not-tags-any')})

query_params_v266 = pt.extended(query_params_v226, add={
    'changes-before': pt.multi_params({'type': 'string', 'format': 'date-time'})})

query_params_v273 = pt.extended(query_params_v266, add={
    'locked': _string,
    'sort_key': pt.multi_params({'type': 'string',
                                 'enum': VALID_SORT_KEYS + IGNORED_SORT_KEYS}),
})

query_params_v275 = pt.extended(query_params_v273, add={
    'sort_key': pt.multi_params({'type': 'string', 'enum': VALID_SORT_KEYS + ['locked']})})
query_params_v275['additionalProperties'] = False

update = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': pt.name,
                'accessIPv4': pt.ipv4,
                'accessIPv6': pt.ipv6,
                'OS-DCF:diskConfig': disk_config,
            },
            'additionalProperties': False,
        },
    },
    'required': ['server'],
    'additionalProperties': False,
}

update_v219 = pt.extended(update, 'server', add={'description': pt.description})

update_v290 = pt.extended(update_v219, 'server', add={'hostname': _hostname})

update_v294 = pt.extended(update_v219, 'server', add={'hostname': _hostname_v294})

# 2.104: unpin (null) or re-pin the server's availability zone.
update_v2104 = pt.extended(update_v294, 'server', add={'pinned_availability_zone': {
    'oneOf': [{'type': 'string', 'minLength': 1, 'maxLength': 255}, {'type': 'null'}]}})
