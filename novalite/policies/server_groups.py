"""Policies of the os-server-groups API: a project's members manage its groups."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-server-groups:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'create', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a server group in the caller\'s project.',
        operations=[{'method': 'POST', 'path': '/os-server-groups'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'delete', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Delete a server group.',
        operations=[{'method': 'DELETE', 'path': '/os-server-groups/{server_group_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'index', check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the server groups of the caller\'s project.',
        operations=[{'method': 'GET', 'path': '/os-server-groups'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'index:all_projects', check_str=base.ADMIN,
        description='List the server groups of every project (all_projects=True).',
        operations=[{'method': 'GET', 'path': '/os-server-groups'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show a server group.',
        operations=[{'method': 'GET', 'path': '/os-server-groups/{server_group_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
