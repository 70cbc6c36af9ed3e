"""Policies of flavors: anyone may read them, only administrators manage them."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

MANAGE = 'os_compute_api:os-flavor-manage:%s'
EXTRA_SPECS = 'os_compute_api:os-flavor-extra-specs:%s'
EXTRA_SPECS_INDEX = EXTRA_SPECS % 'index'
_SPECS_PATH = '/flavors/{flavor_id}/os-extra_specs'


def _specs_rule(name: str, check: str, description: str, method: str, path: str
                ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=EXTRA_SPECS % name, check_str=check,
                                        description=description,
                                        operations=[{'method': method, 'path': path}],
                                        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=MANAGE % 'create', check_str=base.ADMIN,
        description='Create a flavor.', operations=[{'method': 'POST', 'path': '/flavors'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=MANAGE % 'delete', check_str=base.ADMIN,
        description='Delete a flavor.',
        operations=[{'method': 'DELETE', 'path': '/flavors/{flavor_id}'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=MANAGE % 'update', check_str=base.ADMIN,
        description='Update the description of a flavor (2.55).',
        operations=[{'method': 'PUT', 'path': '/flavors/{flavor_id}'}],
        scope_types=['project']),
    _specs_rule('show', base.PROJECT_READER_OR_ADMIN, 'Show one extra spec of a flavor.',
                'GET', _SPECS_PATH + '/{key}'),
    _specs_rule('create', base.ADMIN, 'Add or update extra specs of a flavor.',
                'POST', _SPECS_PATH),
    _specs_rule('update', base.ADMIN, 'Set one extra spec of a flavor.',
                'PUT', _SPECS_PATH + '/{key}'),
    _specs_rule('delete', base.ADMIN, 'Delete one extra spec of a flavor.',
                'DELETE', _SPECS_PATH + '/{key}'),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the extra specs of a flavor (in flavor views from 2.61 and '
                    'embedded server flavors from 2.47).',
        operations=[{'method': 'GET', 'path': _SPECS_PATH},
                    {'method': 'GET', 'path': '/flavors/{flavor_id}'},
                    {'method': 'GET', 'path': '/servers/{server_id}'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
