"""Policies of the limits API: anyone sees their own, administrators any project's."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:limits'
OTHER_PROJECT = 'os_compute_api:limits:other_project'

_DEPRECATED = base.deprecated('os_compute_api:os-used-limits', base.RULE_ADMIN_API)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE, check_str='@',
        description='Show the rate and absolute limits of the caller\'s project.',
        operations=[{'method': 'GET', 'path': '/limits'}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=OTHER_PROJECT, check_str=base.ADMIN,
        description='Show the limits of another project (the tenant_id query parameter).',
        operations=[{'method': 'GET', 'path': '/limits'}], scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
