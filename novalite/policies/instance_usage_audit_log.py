"""Policies of the os-instance_usage_audit_log API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-instance-usage-audit-log:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-instance-usage-audit-log',
                              base.RULE_ADMIN_API)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'list', check_str=base.ADMIN,
        description='List all usage audits.',
        operations=[{'method': 'GET', 'path': '/os-instance_usage_audit_log'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.ADMIN,
        description='List all usage audits that occurred before a specified time for all '
                    'servers on all compute hosts where usage auditing is configured.',
        operations=[{'method': 'GET',
                     'path': '/os-instance_usage_audit_log/{before_timestamp}'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
