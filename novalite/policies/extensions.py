"""Policies of the extensions API: anyone may list the extension aliases."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:extensions'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.RULE_ANY,
        description='List the extensions and show one by alias.',
        operations=[{'method': 'GET', 'path': '/extensions'},
                    {'method': 'GET', 'path': '/extensions/{alias}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
