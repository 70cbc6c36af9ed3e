"""Policy of a server's addresses (GET /servers/{id}/ips): its project, or admins."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:ips:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'index', check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the addresses of a server, by network.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/ips'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the addresses of a server on one network.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/ips/{network_label}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
