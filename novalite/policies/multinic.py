"""Policy of the fixed-IP server actions (addFixedIp, removeFixedIp; until 2.43)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-multinic:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-multinic', base.RULE_ADMIN_OR_OWNER,
                              '22.0.0')

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'add', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Add a fixed IP address to a server (deprecated in Nova with 2.44).',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (addFixedIp)'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'remove', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Remove a fixed IP address from a server (deprecated in Nova with 2.44).',
        operations=[{'method': 'POST',
                     'path': '/servers/{server_id}/action (removeFixedIp)'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
