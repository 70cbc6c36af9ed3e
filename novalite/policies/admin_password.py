"""Policy of changing the administrator password of a server."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-admin-password'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Change the administrative password of a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (changePassword)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
