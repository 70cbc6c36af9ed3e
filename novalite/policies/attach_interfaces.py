"""Policy of a server's network interfaces (os-interface)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-attach-interfaces:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-attach-interfaces',
                              base.RULE_ADMIN_OR_OWNER)

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'list', check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the port interfaces attached to a server.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/os-interface'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the details of a port interface attached to a server.',
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/os-interface/{port_id}'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'create', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Attach an interface to a server.',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/os-interface'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'delete', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Detach an interface from a server.',
        operations=[{'method': 'DELETE',
                     'path': '/servers/{server_id}/os-interface/{port_id}'}],
        scope_types=['project'],
        deprecated_rule=_DEPRECATED),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
