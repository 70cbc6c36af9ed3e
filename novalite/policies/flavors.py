"""Policies of flavors: anyone may read them, only administrators manage them."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

MANAGE = 'os_compute_api:os-flavor-manage:%s'
EXTRA_SPECS_INDEX = 'os_compute_api:os-flavor-extra-specs:index'

rules = [
    policy.DocumentedRuleDefault(
        name=MANAGE % 'create', check_str=base.RULE_ADMIN_API,
        description='Create a flavor.', operations=[{'method': 'POST', 'path': '/flavors'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=MANAGE % 'delete', check_str=base.RULE_ADMIN_API,
        description='Delete a flavor.',
        operations=[{'method': 'DELETE', 'path': '/flavors/{flavor_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the extra specs of a flavor (in flavor views from 2.61 and '
                    'embedded server flavors from 2.47).',
        operations=[{'method': 'GET', 'path': '/flavors/{flavor_id}'},
                    {'method': 'GET', 'path': '/servers/{server_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
