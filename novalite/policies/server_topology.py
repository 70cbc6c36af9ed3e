"""Policy of a server's NUMA topology (2.78): the project reads it; only
administrators see the host side (host NUMA node, CPU pinning)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'compute:server:topology:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'index', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the NUMA topology data for a server',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/topology'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME % 'host:index', check_str='rule:context_is_admin',
        description='Show the NUMA topology data for a server with host NUMA ID and '
                    'CPU pinning information',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/topology'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
