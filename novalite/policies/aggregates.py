"""Policies of the os-aggregates API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-aggregates:%s'
_ONE = '/os-aggregates/{aggregate_id}'
_ACTION = _ONE + '/action (%s)'


def _rule(name: str, description: str, method: str, path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=BASE % name, check_str=base.ADMIN, description=description,
        operations=[{'method': method, 'path': path}], scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('index', 'List the host aggregates.', 'GET', '/os-aggregates'),
    _rule('create', 'Create a host aggregate.', 'POST', '/os-aggregates'),
    _rule('show', 'Show a host aggregate.', 'GET', _ONE),
    _rule('update', 'Rename an aggregate or change its availability zone.', 'PUT', _ONE),
    _rule('delete', 'Delete an empty host aggregate.', 'DELETE', _ONE),
    _rule('add_host', 'Add a compute host to an aggregate.', 'POST', _ACTION % 'add_host'),
    _rule('remove_host', 'Remove a host from an aggregate.', 'POST',
          _ACTION % 'remove_host'),
    _rule('set_metadata', 'Set or remove metadata of an aggregate.', 'POST',
          _ACTION % 'set_metadata'),
]

IMAGES = 'compute:aggregates:images'
rules.append(policy.DocumentedRuleDefault(
    name=IMAGES, check_str=base.ADMIN,
    description='Request image caching for an aggregate.',
    operations=[{'method': 'POST', 'path': _ONE + '/images'}], scope_types=['project']))


def list_rules() -> list[policy.RuleDefault]:
    return rules
