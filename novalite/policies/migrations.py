"""Policies of the os-migrations API: a project manager lists the project's migrations
without their hosts; administrators list every project's, hosts included."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-migrations:%s'

# A deployment that overrode ``index`` keeps that rule for the two rules split from it.
_DEPRECATED_INDEX = policy.DeprecatedRule(
    BASE % 'index', base.ADMIN, deprecated_reason=base.DEPRECATED_REASON,
    deprecated_since='32.0.0')


def _rule(name: str, check: str, description: str,
          deprecated: policy.DeprecatedRule | None = None) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=BASE % name, check_str=check, description=description,
        operations=[{'method': 'GET', 'path': '/os-migrations'}], scope_types=['project'],
        deprecated_rule=deprecated)


rules: list[policy.RuleDefault] = [
    _rule('index', base.PROJECT_MANAGER_OR_ADMIN, 'List migrations without host info.'),
    _rule('index:all_projects', base.ADMIN,
          'List the migrations of every project, or of another project.', _DEPRECATED_INDEX),
    _rule('index:host', base.ADMIN, 'List migrations with their hosts and nodes.',
          _DEPRECATED_INDEX),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
