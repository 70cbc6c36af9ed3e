"""Policies of the os-hosts API (until 2.42): administrators only."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE = 'os_compute_api:os-hosts:%s'

_DEPRECATED = 'This API is deprecated in favor of os-hypervisors and os-services.'


def _rule(name: str, description: str, method: str, path: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=BASE % name, check_str=base.ADMIN,
        description='%s\n\n%s' % (description, _DEPRECATED),
        operations=[{'method': method, 'path': path}], scope_types=['project'],
        deprecated_rule=base.deprecated('os_compute_api:os-hosts', base.RULE_ADMIN_API))


rules: list[policy.RuleDefault] = [
    _rule('list', 'List physical hosts.', 'GET', '/os-hosts'),
    _rule('show', 'Show physical host.', 'GET', '/os-hosts/{host_name}'),
    _rule('update', 'Update physical host.', 'PUT', '/os-hosts/{host_name}'),
    _rule('reboot', 'Reboot physical host.', 'GET', '/os-hosts/{host_name}/reboot'),
    _rule('shutdown', 'Shutdown physical host.', 'GET', '/os-hosts/{host_name}/shutdown'),
    _rule('start', 'Start physical host.', 'GET', '/os-hosts/{host_name}/startup'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
