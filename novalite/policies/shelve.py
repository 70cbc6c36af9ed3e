"""Policies of os-shelve: members shelve and unshelve; offloading and choosing the
host to unshelve onto are for administrators (Nova's defaults)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-shelve:%s'


def _rule(name: str, check: str, description: str, action: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=POLICY_ROOT % name, check_str=check, description=description,
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (%s)' % action}],
        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('shelve', base.PROJECT_MEMBER_OR_ADMIN, 'Shelve a server.', 'shelve'),
    _rule('shelve_offload', base.ADMIN, 'Offload a shelved server.',
          'shelveOffload'),
    _rule('unshelve', base.PROJECT_MEMBER_OR_ADMIN, 'Unshelve (restore) a shelved server.',
          'unshelve'),
    _rule('unshelve_to_host', base.ADMIN,
          'Unshelve a shelved-offloaded server onto a given host (2.91).', 'unshelve'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
