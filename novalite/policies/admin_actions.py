"""Policy of the admin actions on servers (os-resetState)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-admin-actions:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'reset_state', check_str=base.ADMIN,
        description='Reset the state of a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (os-resetState)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
