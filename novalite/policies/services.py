"""Policies of the os-services API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-services:%s'

rules = [
    policy.DocumentedRuleDefault(
        name=BASE % 'list', check_str=base.RULE_ADMIN_API,
        description='List the services of every cell, with their state.',
        operations=[{'method': 'GET', 'path': '/os-services'}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'update', check_str=base.RULE_ADMIN_API,
        description='Enable or disable a compute service, or force it down.',
        operations=[{'method': 'PUT', 'path': '/os-services/{service_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=BASE % 'delete', check_str=base.RULE_ADMIN_API,
        description='Delete a service; a compute service only once its host is empty.',
        operations=[{'method': 'DELETE', 'path': '/os-services/{service_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
