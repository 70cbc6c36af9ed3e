"""Policy of a server's encrypted password (the one its guest posted to the metadata
service): the project reads it, its members clear it."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-server-password:%s'

_DEPRECATED = policy.DeprecatedRule(
    'os_compute_api:os-server-password', 'rule:admin_or_owner',
    deprecated_reason='Nova API policies moved to new default roles with scope types.',
    deprecated_since='21.0.0')

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the encrypted administrative password of a server',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/os-server-password'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'clear', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Clear the encrypted administrative password of a server',
        operations=[{'method': 'DELETE',
                     'path': '/servers/{server_id}/os-server-password'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
