"""Policy of the floating IP pools proxy (before 2.36): anyone; Neutron says what they see."""
from __future__ import annotations

from oslo_policy import policy

BASE_POLICY_NAME = 'os_compute_api:os-floating-ip-pools'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str='@',
        description='List floating IP pools. This API is deprecated.',
        operations=[{'method': 'GET', 'path': '/os-floating-ip-pools'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
