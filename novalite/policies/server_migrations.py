"""Policies of a server's migrations (servers/{server_id}/migrations): the project's
manager lists them without hosts, aborts them and forces them to complete (Nova 34's
defaults); administrators also see the hosts and each one."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:servers:migrations:%s'

_DEPRECATED_INDEX = policy.DeprecatedRule(
    BASE % 'index', base.ADMIN, deprecated_reason=base.DEPRECATED_REASON,
    deprecated_since='32.0.0')

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'show', check_str=base.ADMIN,
        description="Show one in-progress live migration of a server.",
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/migrations/{migration_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'index', check_str=base.PROJECT_MANAGER_OR_ADMIN,
        description="List a server's in-progress live migrations without host info.",
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/migrations'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'index:host', check_str=base.ADMIN,
        description="List a server's in-progress live migrations with their hosts.",
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/migrations'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED_INDEX),
    policy.DocumentedRuleDefault(
        name=BASE % 'force_complete', check_str=base.PROJECT_MANAGER_OR_ADMIN,
        description="Force an in-progress live migration of a server to complete.",
        operations=[{'method': 'POST',
                     'path': '/servers/{server_id}/migrations/{migration_id}/action '
                             '(force_complete)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'delete', check_str=base.PROJECT_MANAGER_OR_ADMIN,
        description="Abort an in-progress live migration of a server.",
        operations=[{'method': 'DELETE',
                     'path': '/servers/{server_id}/migrations/{migration_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
