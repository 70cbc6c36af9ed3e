"""Policies of servers: project members own theirs, administrators see every project."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

SERVERS = 'os_compute_api:servers:%s'
EXTENDED_ATTRIBUTES = 'os_compute_api:os-extended-server-attributes'
REQUESTED_DESTINATION = 'compute:servers:create:requested_destination'
NETWORK_ATTACH_EXTERNAL = 'network:attach_external_network'


def _rule(name: str, check: str, description: str, method: str, path: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=name, check_str=check, description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule(SERVERS % 'index', base.PROJECT_READER_OR_ADMIN, 'List servers.',
          'GET', '/servers'),
    _rule(SERVERS % 'detail', base.PROJECT_READER_OR_ADMIN, 'List servers with details.',
          'GET', '/servers/detail'),
    _rule(SERVERS % 'index:get_all_tenants', base.ADMIN,
          'List servers of every project (all_tenants).', 'GET', '/servers'),
    _rule(SERVERS % 'detail:get_all_tenants', base.ADMIN,
          'List servers of every project with details (all_tenants).',
          'GET', '/servers/detail'),
    _rule(SERVERS % 'allow_all_filters', base.ADMIN,
          'Filter server lists by admin-only fields (host, node...).',
          'GET', '/servers'),
    _rule(SERVERS % 'show', base.PROJECT_READER_OR_ADMIN, 'Show a server.',
          'GET', '/servers/{server_id}'),
    _rule(SERVERS % 'create', base.PROJECT_MEMBER_OR_ADMIN, 'Create a server.',
          'POST', '/servers'),
    _rule(SERVERS % 'create:forced_host', base.ADMIN,
          'Create a server on a given host or node (availability_zone "zone:host[:node]").',
          'POST', '/servers'),
    _rule(SERVERS % 'create:attach_volume', base.PROJECT_MEMBER_OR_ADMIN,
          'Create a server with volumes (block_device_mapping_v2 mapping volumes).',
          'POST', '/servers'),
    _rule(SERVERS % 'update', base.PROJECT_MEMBER_OR_ADMIN, 'Update a server.',
          'PUT', '/servers/{server_id}'),
    _rule(REQUESTED_DESTINATION, base.ADMIN,
          'Create a server on a given host or hypervisor, checked by the scheduler (2.74).',
          'POST', '/servers'),
    policy.DocumentedRuleDefault(
        name=SERVERS % 'show:flavor-extra-specs', check_str=base.PROJECT_READER_OR_ADMIN,
        description="Show the flavor's extra specs in a server's view (2.47): show, "
                    "detail, update and rebuild.",
        operations=[{'method': 'GET', 'path': '/servers/detail'},
                    {'method': 'GET', 'path': '/servers/{server_id}'},
                    {'method': 'PUT', 'path': '/servers/{server_id}'},
                    {'method': 'POST', 'path': '/servers/{server_id}/action (rebuild)'}],
        scope_types=['project'],
        deprecated_rule=base.deprecated('os_compute_api:os-flavor-extra-specs:index',
                                        base.RULE_ADMIN_OR_OWNER, since='25.0.0')),
    policy.DocumentedRuleDefault(
        name=NETWORK_ATTACH_EXTERNAL, check_str=base.ADMIN,
        description='Attach an unshared external network to a server.',
        operations=[{'method': 'POST', 'path': '/servers'},
                    {'method': 'POST', 'path': '/servers/{server_id}/os-interface'}],
        scope_types=['project']),
    _rule(SERVERS % 'show:host_status', base.ADMIN,
          'Show the host_status of servers (2.16).', 'GET', '/servers/{server_id}'),
    _rule(SERVERS % 'show:host_status:unknown-only', base.ADMIN,
          'Show host_status only when it is UNKNOWN (used when show:host_status fails).',
          'GET', '/servers/{server_id}'),
    _rule(SERVERS % 'delete', base.PROJECT_MEMBER_OR_ADMIN, 'Delete a server.',
          'DELETE', '/servers/{server_id}'),
    _rule(SERVERS % 'reboot', base.PROJECT_MEMBER_OR_ADMIN, 'Reboot a server.',
          'POST', '/servers/{server_id}/action (reboot)'),
    _rule(SERVERS % 'stop', base.PROJECT_MEMBER_OR_ADMIN, 'Stop a server.',
          'POST', '/servers/{server_id}/action (os-stop)'),
    _rule(SERVERS % 'start', base.PROJECT_MEMBER_OR_ADMIN, 'Start a stopped server.',
          'POST', '/servers/{server_id}/action (os-start)'),
    _rule(EXTENDED_ATTRIBUTES, base.ADMIN,
          'Show the OS-EXT-SRV-ATTR fields (host, hypervisor, instance name) of servers.',
          'GET', '/servers/{server_id}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
