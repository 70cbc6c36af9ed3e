"""Policy of locking servers: the owner or an admin locks; unlocking a lock set by
the other kind of caller needs ``unlock:unlock_override`` (admins)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-lock-server:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'lock', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Lock a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (lock)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'unlock', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Unlock a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (unlock)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'unlock:unlock_override', check_str=base.ADMIN,
        description='Unlock a server locked by someone else (an admin lock seen by its owner).',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (unlock)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
