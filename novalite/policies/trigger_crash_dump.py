"""Policy of trigger_crash_dump (a servers rule in Nova, kept in a module of its own
here)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_NAME = 'os_compute_api:servers:trigger_crash_dump'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Trigger a crash dump in a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (trigger_crash_dump)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
