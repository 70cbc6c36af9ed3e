"""Policies of server shares (2.97): project readers list them, project members change them."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-server-shares:%s'
_PATH = '/servers/{server_id}/shares'


def _rule(name: str, check: str, description: str, method: str, path: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=POLICY_ROOT % name, check_str=check,
                                        description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('index', base.PROJECT_READER_OR_ADMIN, 'List the shares attached to a server.',
          'GET', _PATH),
    _rule('create', base.PROJECT_MEMBER_OR_ADMIN, 'Attach a Manila share to a server.',
          'POST', _PATH),
    _rule('show', base.PROJECT_READER_OR_ADMIN, 'Show one share attached to a server.',
          'GET', _PATH + '/{share_id}'),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN, 'Detach a share from a server.',
          'DELETE', _PATH + '/{share_id}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
