"""Policies of the security group proxies (before 2.36) and of a server's security groups.

Neutron decides what the caller may see and change; these rules decide who may ask.
"""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_NAME = 'os_compute_api:os-security-groups:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-security-groups', base.RULE_ADMIN_OR_OWNER,
                              '22.0.0')


def _rule(name: str, check_str: str, description: str, method: str,
          path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=POLICY_NAME % name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}], scope_types=['project'],
        deprecated_rule=_DEPRECATED)


rules: list[policy.RuleDefault] = [
    _rule('get', base.PROJECT_READER_OR_ADMIN,
          'List security groups. This API is deprecated.', 'GET', '/os-security-groups'),
    _rule('show', base.PROJECT_READER_OR_ADMIN,
          'Show security group. This API is deprecated.', 'GET',
          '/os-security-groups/{security_group_id}'),
    _rule('create', base.PROJECT_MEMBER_OR_ADMIN,
          'Create security group. This API is deprecated.', 'POST', '/os-security-groups'),
    _rule('update', base.PROJECT_MEMBER_OR_ADMIN,
          'Update security group. This API is deprecated.', 'PUT',
          '/os-security-groups/{security_group_id}'),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN,
          'Delete security group. This API is deprecated.', 'DELETE',
          '/os-security-groups/{security_group_id}'),
    _rule('rule:create', base.PROJECT_MEMBER_OR_ADMIN,
          'Create security group Rule. This API is deprecated.', 'POST',
          '/os-security-group-rules'),
    _rule('rule:delete', base.PROJECT_MEMBER_OR_ADMIN,
          'Delete security group Rule. This API is deprecated.', 'DELETE',
          '/os-security-group-rules/{security_group_id}'),
    _rule('list', base.PROJECT_READER_OR_ADMIN, 'List security groups of server.', 'GET',
          '/servers/{server_id}/os-security-groups'),
    _rule('add', base.PROJECT_MEMBER_OR_ADMIN, 'Add security groups to server.', 'POST',
          '/servers/{server_id}/action (addSecurityGroup)'),
    _rule('remove', base.PROJECT_MEMBER_OR_ADMIN, 'Remove security groups from server.',
          'POST', '/servers/{server_id}/action (removeSecurityGroup)'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
