"""Policies of the os-availability-zone API: zones for all, their hosts for admins."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-availability-zone:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'list', check_str='@',
        description='List the availability zones and whether they are available.',
        operations=[{'method': 'GET', 'path': '/os-availability-zone'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'detail', check_str=base.ADMIN,
        description='List the availability zones with their hosts and services.',
        operations=[{'method': 'GET', 'path': '/os-availability-zone/detail'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
