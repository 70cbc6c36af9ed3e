"""Policy of a server's remote consoles: project members open their servers' consoles."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-remote-consoles'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE_POLICY_NAME, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Generate a URL to access a remote server console. This policy is '
                    'for POST /remote-consoles and the deprecated server actions '
                    'os-getSerialConsole, os-getSPICEConsole and os-getVNCConsole.',
        operations=[
            {'method': 'POST', 'path': '/servers/{server_id}/action (os-getSerialConsole)'},
            {'method': 'POST', 'path': '/servers/{server_id}/action (os-getSPICEConsole)'},
            {'method': 'POST', 'path': '/servers/{server_id}/action (os-getVNCConsole)'},
            {'method': 'POST', 'path': '/servers/{server_id}/remote-consoles'},
        ],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
