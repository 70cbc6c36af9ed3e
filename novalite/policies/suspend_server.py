"""Policy of suspending and resuming servers."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-suspend-server:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'suspend', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Suspend a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (suspend)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'resume', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Resume a suspended server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (resume)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
