"""Policies of os-flavor-access: administrators share private flavors with projects."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-flavor-access'
POLICY_ROOT = 'os_compute_api:os-flavor-access:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-flavor-access', base.RULE_ADMIN_OR_OWNER)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.ADMIN,
        description='List the projects a flavor is shared with.',
        operations=[{'method': 'GET', 'path': '/flavors/{flavor_id}/os-flavor-access'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'add_tenant_access', check_str=base.ADMIN,
        description='Share a private flavor with a project.',
        operations=[{'method': 'POST', 'path': '/flavors/{flavor_id}/action (addTenantAccess)'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'remove_tenant_access', check_str=base.ADMIN,
        description='Stop sharing a private flavor with a project.',
        operations=[{'method': 'POST',
                     'path': '/flavors/{flavor_id}/action (removeTenantAccess)'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
