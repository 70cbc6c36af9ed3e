"""Policy of pausing and unpausing servers."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-pause-server:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'pause', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Pause a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (pause)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'unpause', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unpause a paused server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (unpause)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
