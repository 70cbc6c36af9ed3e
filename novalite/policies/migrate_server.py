"""Policies of moving servers: resize, confirm and revert are the owner's; migrate,
live-migrate and evacuate are administrators' (Nova's rule names and defaults)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

SERVERS = 'os_compute_api:servers:%s'
MIGRATE = 'os_compute_api:os-migrate-server:%s'
EVACUATE = 'os_compute_api:os-evacuate'
_ACTION = '/servers/{server_id}/action (%s)'


def _rule(name: str, check: str, description: str, action: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{'method': 'POST', 'path': _ACTION % action}],
        scope_types=['project'])


rules = [
    _rule(SERVERS % 'resize', base.PROJECT_MEMBER_OR_ADMIN, 'Resize a server.',
          'resize'),
    _rule(SERVERS % 'confirm_resize', base.PROJECT_MEMBER_OR_ADMIN,
          'Confirm the resize of a server.', 'confirmResize'),
    _rule(SERVERS % 'revert_resize', base.PROJECT_MEMBER_OR_ADMIN,
          'Revert the resize of a server.', 'revertResize'),
    _rule(MIGRATE % 'migrate', base.RULE_ADMIN_API, 'Cold migrate a server to a host.',
          'migrate'),
    _rule(MIGRATE % 'migrate:host', base.RULE_ADMIN_API,
          'Cold migrate a server to a given host.', 'migrate'),
    _rule(MIGRATE % 'migrate_live', base.RULE_ADMIN_API,
          'Live migrate a server to a new host without a reboot.', 'os-migrateLive'),
    _rule(MIGRATE % 'migrate_live:host', base.RULE_ADMIN_API,
          'Live migrate a server to a given host.', 'os-migrateLive'),
    _rule(EVACUATE, base.RULE_ADMIN_API,
          'Evacuate a server from a failed host to a new host.', 'evacuate'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
