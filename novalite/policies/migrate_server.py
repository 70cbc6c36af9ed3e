"""Policies of moving servers: resize, confirm and revert are the owner's; migrate and
live-migrate the project manager's (to a host of their choice the administrator's);
evacuate the administrator's (Nova's rule names and defaults)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

SERVERS = 'os_compute_api:servers:%s'
MIGRATE = 'os_compute_api:os-migrate-server:%s'
EVACUATE = 'os_compute_api:os-evacuate'
_ACTION = '/servers/{server_id}/action (%s)'


# A deployment that overrode ``migrate_live`` keeps that rule for a requested host too.
_DEPRECATED_LIVE = policy.DeprecatedRule(
    MIGRATE % 'migrate_live', base.ADMIN,
    deprecated_reason='The live migration to a requested host has a rule of its own.',
    deprecated_since='32.0.0')


def _rule(name: str, check: str, description: str, action: str,
          deprecated: policy.DeprecatedRule | None = None) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{'method': 'POST', 'path': _ACTION % action}],
        scope_types=['project'], deprecated_rule=deprecated)


rules: list[policy.RuleDefault] = [
    _rule(SERVERS % 'resize', base.PROJECT_MEMBER_OR_ADMIN, 'Resize a server.',
          'resize'),
    _rule(SERVERS % 'confirm_resize', base.PROJECT_MEMBER_OR_ADMIN,
          'Confirm the resize of a server.', 'confirmResize'),
    _rule(SERVERS % 'revert_resize', base.PROJECT_MEMBER_OR_ADMIN,
          'Revert the resize of a server.', 'revertResize'),
    _rule(MIGRATE % 'migrate', base.PROJECT_MANAGER_OR_ADMIN, 'Cold migrate a server.',
          'migrate'),
    _rule(MIGRATE % 'migrate:host', base.ADMIN,
          'Cold migrate a server to a given host.', 'migrate'),
    _rule(MIGRATE % 'migrate_live', base.PROJECT_MANAGER_OR_ADMIN,
          'Live migrate a server to a new host without a reboot.', 'os-migrateLive'),
    _rule(MIGRATE % 'migrate_live:host', base.ADMIN,
          'Live migrate a server to a given host.', 'os-migrateLive', _DEPRECATED_LIVE),
    _rule(EVACUATE, base.ADMIN,
          'Evacuate a server from a failed host to a new host.', 'evacuate'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
