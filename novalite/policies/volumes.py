"""Policies of the os-volumes and os-snapshots proxies to Cinder (before 2.36): reading
is a project reader's, creating and deleting a project member's, as Nova's (all named
``os_compute_api:os-volumes`` together before Nova 22)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-volumes'
POLICY_NAME = BASE_POLICY_NAME + ':%s'

_DEPRECATED = base.deprecated(BASE_POLICY_NAME, base.RULE_ADMIN_OR_OWNER, '22.0.0')
_PROXY = '\n\nThis API is a proxy call to the Volume service. It is deprecated.'


def _rule(name: str, check_str: str, description: str, method: str,
          path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=POLICY_NAME % name, check_str=check_str, description=description + _PROXY,
        operations=[{'method': method, 'path': path}], scope_types=['project'],
        deprecated_rule=_DEPRECATED)


rules: list[policy.RuleDefault] = [
    _rule('list', base.PROJECT_READER_OR_ADMIN, 'List volumes.', 'GET', '/os-volumes'),
    _rule('create', base.PROJECT_MEMBER_OR_ADMIN, 'Create volume.', 'POST', '/os-volumes'),
    _rule('detail', base.PROJECT_READER_OR_ADMIN, 'List volumes detail.', 'GET',
          '/os-volumes/detail'),
    _rule('show', base.PROJECT_READER_OR_ADMIN, 'Show volume.', 'GET',
          '/os-volumes/{volume_id}'),
    _rule('delete', base.PROJECT_MEMBER_OR_ADMIN, 'Delete volume.', 'DELETE',
          '/os-volumes/{volume_id}'),
    _rule('snapshots:list', base.PROJECT_READER_OR_ADMIN, 'List snapshots.', 'GET',
          '/os-snapshots'),
    _rule('snapshots:create', base.PROJECT_MEMBER_OR_ADMIN, 'Create snapshots.', 'POST',
          '/os-snapshots'),
    _rule('snapshots:detail', base.PROJECT_READER_OR_ADMIN, 'List snapshots details.',
          'GET', '/os-snapshots/detail'),
    _rule('snapshots:show', base.PROJECT_READER_OR_ADMIN, 'Show snapshot.', 'GET',
          '/os-snapshots/{snapshot_id}'),
    _rule('snapshots:delete', base.PROJECT_MEMBER_OR_ADMIN, 'Delete snapshot.', 'DELETE',
          '/os-snapshots/{snapshot_id}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
