"""Policies of the os-services API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-services:%s'

# The one rule these three replaced, for deployments that still override it.
_DEPRECATED = base.deprecated('os_compute_api:os-services', base.RULE_ADMIN_API)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'list', check_str=base.ADMIN,
        description='List the services of every cell, with their state.',
        operations=[{'method': 'GET', 'path': '/os-services'}], scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=BASE % 'update', check_str=base.ADMIN,
        description='Enable or disable a compute service, or force it down.',
        operations=[{'method': 'PUT', 'path': '/os-services/{service_id}'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=BASE % 'delete', check_str=base.ADMIN,
        description='Delete a service; a compute service only once its host is empty.',
        operations=[{'method': 'DELETE', 'path': '/os-services/{service_id}'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
