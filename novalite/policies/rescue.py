"""Policy of rescuing and unrescuing servers."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-rescue'
UNRESCUE_POLICY_NAME = 'os_compute_api:os-unrescue'

_DEPRECATED = base.deprecated('os_compute_api:os-rescue', base.RULE_ADMIN_OR_OWNER)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Rescue a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (rescue)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=UNRESCUE_POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unrescue a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (unrescue)'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
