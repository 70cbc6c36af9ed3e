"""Policy of soft-deleted servers: restore them, or delete them now."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-deferred-delete:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-deferred-delete', base.RULE_ADMIN_OR_OWNER)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'restore', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Restore a soft-deleted server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (restore)'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'force', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Force-delete a server before its deferred cleanup.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (forceDelete)'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
