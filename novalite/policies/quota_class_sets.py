"""Policies of the os-quota-class-sets API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-quota-class-sets:%s'
_PATH = '/os-quota-class-sets/{quota_class}'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.ADMIN,
        description='Show the limits of a quota class.',
        operations=[{'method': 'GET', 'path': _PATH}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'update', check_str=base.ADMIN,
        description='Update the limits of a quota class.',
        operations=[{'method': 'PUT', 'path': _PATH}], scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
