"""Policy of a server's diagnostics: administrators only (they show host details)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-server-diagnostics'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.ADMIN,
        description='Show the diagnostics of a server.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/diagnostics'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
