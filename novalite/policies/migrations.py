"""Policies of the os-migrations API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-migrations:%s'

rules = [
    policy.DocumentedRuleDefault(
        name=BASE % 'index', check_str=base.RULE_ADMIN_API,
        description='List the migrations of every cell.',
        operations=[{'method': 'GET', 'path': '/os-migrations'}], scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
