"""Policy of os-console-auth-tokens: administrators only (it shows the host's address)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-console-auth-tokens'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.ADMIN,
        description='Show console connection information for a given console '
                    'authentication token.',
        operations=[{'method': 'GET', 'path': '/os-console-auth-tokens/{console_token}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
