"""Policies of server metadata: project readers read it, project members change it."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:server-metadata:%s'
_PATH = '/servers/{server_id}/metadata'


def _rule(name: str, check: str, description: str, method: str, path: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=POLICY_ROOT % name, check_str=check,
                                        description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('index', base.PROJECT_READER_OR_ADMIN, 'List the metadata of a server.',
          'GET', _PATH),
    _rule('show', base.PROJECT_READER_OR_ADMIN, 'Show one metadata item of a server.',
          'GET', _PATH + '/{key}'),
    _rule('create', base.PROJECT_MEMBER_OR_ADMIN, 'Add or update metadata items.',
          'POST', _PATH),
    _rule('update_all', base.PROJECT_MEMBER_OR_ADMIN, 'Replace all metadata of a server.',
          'PUT', _PATH),
    _rule('update', base.PROJECT_MEMBER_OR_ADMIN, 'Set one metadata item of a server.',
          'PUT', _PATH + '/{key}'),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN, 'Delete one metadata item of a server.',
          'DELETE', _PATH + '/{key}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
