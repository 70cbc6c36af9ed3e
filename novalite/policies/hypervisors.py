"""Policies of the os-hypervisors API: administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-hypervisors:%s'

_DEPRECATED = base.deprecated('os_compute_api:os-hypervisors', base.RULE_ADMIN_API)


def _rule(name: str, description: str, path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=BASE % name, check_str=base.ADMIN, description=description,
        operations=[{'method': 'GET', 'path': path}], scope_types=['project'],
        deprecated_rule=_DEPRECATED)


rules: list[policy.RuleDefault] = [
    _rule('list', 'List the hypervisors.', '/os-hypervisors'),
    _rule('list-detail', 'List the hypervisors with their details.',
          '/os-hypervisors/detail'),
    _rule('statistics', 'Show the summed statistics of the hypervisors (until 2.87).',
          '/os-hypervisors/statistics'),
    _rule('show', 'Show a hypervisor.', '/os-hypervisors/{hypervisor_id}'),
    _rule('uptime', 'Show the uptime of a hypervisor (until 2.87).',
          '/os-hypervisors/{hypervisor_id}/uptime'),
    _rule('search', 'Search hypervisors by host name (until 2.52).',
          '/os-hypervisors/{hypervisor_hostname_pattern}/search'),
    _rule('servers', 'List the servers of matching hypervisors (until 2.52).',
          '/os-hypervisors/{hypervisor_hostname_pattern}/servers'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
