"""Policies of server tags: project readers read them, project members change them."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-server-tags:%s'
_PATH = '/servers/{server_id}/tags'


def _rule(name: str, check: str, description: str, method: str, path: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=POLICY_ROOT % name, check_str=check,
                                        description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('index', base.PROJECT_READER_OR_ADMIN, 'List the tags of a server.', 'GET', _PATH),
    _rule('show', base.PROJECT_READER_OR_ADMIN, 'Check whether a server has a tag.',
          'GET', _PATH + '/{tag}'),
    _rule('update', base.PROJECT_MEMBER_OR_ADMIN, 'Add one tag to a server.',
          'PUT', _PATH + '/{tag}'),
    _rule('update_all', base.PROJECT_MEMBER_OR_ADMIN, 'Replace all tags of a server.',
          'PUT', _PATH),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN, 'Remove one tag from a server.',
          'DELETE', _PATH + '/{tag}'),
    _rule('delete_all', base.PROJECT_MEMBER_OR_ADMIN, 'Remove all tags from a server.',
          'DELETE', _PATH),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
