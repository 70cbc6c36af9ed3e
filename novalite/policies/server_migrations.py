"""Policies of a server's migrations (servers/{server_id}/migrations): administrators."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:servers:migrations:%s'

rules = [
    policy.DocumentedRuleDefault(
        name=BASE % 'index', check_str=base.RULE_ADMIN_API,
        description="List a server's in-progress live migrations.",
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/migrations'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.RULE_ADMIN_API,
        description="Show one in-progress live migration of a server.",
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/migrations/{migration_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
