"""Policies of os-instance-actions: the history of a server, its events for admins."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

BASE_POLICY_NAME = 'os_compute_api:os-instance-actions:%s'
_PATH = '/servers/{server_id}/os-instance-actions'


_DEPRECATED = base.deprecated('os_compute_api:os-instance-actions', base.RULE_ADMIN_OR_OWNER)


def _rule(name: str, check: str, description: str, path: str,
          deprecated: policy.DeprecatedRule | None = None) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(name=BASE_POLICY_NAME % name, check_str=check,
                                        description=description,
                                        operations=[{'method': 'GET', 'path': path}],
                                        scope_types=['project'], deprecated_rule=deprecated)


rules: list[policy.RuleDefault] = [
    _rule('list', base.PROJECT_READER_OR_ADMIN, 'List the actions of a server.', _PATH,
          _DEPRECATED),
    _rule('show', base.PROJECT_READER_OR_ADMIN, 'Show one action of a server.',
          _PATH + '/{request_id}', _DEPRECATED),
    _rule('events', base.ADMIN,
          'Show the events of an action with tracebacks (and, from 2.62, the host); '
          'from 2.51 others see the events without them.', _PATH + '/{request_id}'),
    _rule('events:details', base.ADMIN,
          'Show the "details" of action events (2.84): they may reveal the deployment.',
          _PATH + '/{request_id}'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
