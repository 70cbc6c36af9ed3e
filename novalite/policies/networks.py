"""Policies of the os-networks proxy (before 2.36): Nova's ``list`` and ``show`` (named
``os_compute_api:os-networks:view`` together before Nova 22)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-networks:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-networks:view', base.RULE_ADMIN_OR_OWNER,
                              '22.0.0')

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'list', check_str=base.PROJECT_READER_OR_ADMIN,
        description='List networks for the project.\n\nThis API is proxy calls to the '
                    'Network service. This is deprecated.',
        operations=[{'method': 'GET', 'path': '/os-networks'}], scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show network details.\n\nThis API is proxy calls to the Network '
                    'service. This is deprecated.',
        operations=[{'method': 'GET', 'path': '/os-networks/{network_id}'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
