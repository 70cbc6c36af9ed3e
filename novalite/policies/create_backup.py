"""Policy of os-create-backup: project members back their servers up."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-create-backup'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a back-up of a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (createBackup)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
