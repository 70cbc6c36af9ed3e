"""Policies of os-simple-tenant-usage: all projects for administrators, one's own
project for its readers."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-simple-tenant-usage:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'list', check_str=base.ADMIN,
        description='Show the usage of every project over a time window.',
        operations=[{'method': 'GET', 'path': '/os-simple-tenant-usage'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the usage of one project over a time window.',
        operations=[{'method': 'GET', 'path': '/os-simple-tenant-usage/{tenant_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
