"""Policies of os-keypairs: a user owns their key pairs; administrators see everyone's."""
from __future__ import annotations

from oslo_policy import policy

POLICY_ROOT = 'os_compute_api:os-keypairs:%s'
# Key pairs belong to users, not projects.
ADMIN_OR_OWNER = '(rule:context_is_admin) or user_id:%(user_id)s'


def _rule(name: str, description: str, method: str, path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=POLICY_ROOT % name, check_str=ADMIN_OR_OWNER,
                                        description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('index', 'List key pairs (of another user: admins, from 2.10).',
          'GET', '/os-keypairs'),
    _rule('create', 'Create or import a key pair (for another user: admins, from 2.10).',
          'POST', '/os-keypairs'),
    _rule('delete', 'Delete a key pair.', 'DELETE', '/os-keypairs/{keypair_name}'),
    _rule('show', 'Show a key pair.', 'GET', '/os-keypairs/{keypair_name}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
