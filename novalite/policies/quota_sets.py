"""Policies of the os-quota-sets API: projects read their own, administrators change."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-quota-sets:%s'
_PATH = '/os-quota-sets/{tenant_id}'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'update', check_str=base.ADMIN,
        description='Update the quotas of a project or of one of its users.',
        operations=[{'method': 'PUT', 'path': _PATH}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'defaults', check_str='@',
        description='List the default quotas.',
        operations=[{'method': 'GET', 'path': _PATH + '/defaults'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the quotas of a project or of one of its users.',
        operations=[{'method': 'GET', 'path': _PATH}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'delete', check_str=base.ADMIN,
        description='Revert the quotas of a project or user to the defaults.',
        operations=[{'method': 'DELETE', 'path': _PATH}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'detail', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the quotas of a project or user with their usage.',
        operations=[{'method': 'GET', 'path': _PATH + '/detail'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
