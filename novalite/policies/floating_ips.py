"""Policies of the floating IP proxy (before 2.36) and its server actions (before 2.44)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-floating-ips:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-floating-ips', base.RULE_ADMIN_OR_OWNER,
                              '22.0.0')


def _rule(name: str, check_str: str, description: str, method: str,
          path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}], scope_types=['project'],
        deprecated_rule=_DEPRECATED)


rules: list[policy.RuleDefault] = [
    _rule('add', base.PROJECT_MEMBER_OR_ADMIN,
          'Associate floating IPs to server. This API is deprecated.', 'POST',
          '/servers/{server_id}/action (addFloatingIp)'),
    _rule('remove', base.PROJECT_MEMBER_OR_ADMIN,
          'Disassociate floating IPs to server. This API is deprecated.', 'POST',
          '/servers/{server_id}/action (removeFloatingIp)'),
    _rule('list', base.PROJECT_READER_OR_ADMIN,
          'List floating IPs. This API is deprecated.', 'GET', '/os-floating-ips'),
    _rule('create', base.PROJECT_MEMBER_OR_ADMIN,
          'Create floating IPs. This API is deprecated.', 'POST', '/os-floating-ips'),
    _rule('show', base.PROJECT_READER_OR_ADMIN,
          'Show floating IPs. This API is deprecated.', 'GET',
          '/os-floating-ips/{floating_ip_id}'),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN,
          'Delete floating IPs. This API is deprecated.', 'DELETE',
          '/os-floating-ips/{floating_ip_id}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
