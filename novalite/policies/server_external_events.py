"""Policy of os-server-external-events: the services that report events (Neutron,
Cinder, Ironic, Cyborg) hold the service role; administrators may send them too."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-server-external-events:%s'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=BASE % 'create', check_str=base.SERVICE_ROLE,
        description='Report events about servers to the compute service.',
        operations=[{'method': 'POST', 'path': '/os-server-external-events'}],
        scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
