"""Policy of a server's volume attachments (os-volume_attachments): the project
reads them, its members attach and detach, only services swap a volume."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base

POLICY_ROOT = 'os_compute_api:os-volumes-attachments:%s'

_COLLECTION = '/servers/{server_id}/os-volume_attachments'
_MEMBER = _COLLECTION + '/{volume_id}'

rules: list[policy.RuleDefault] = [
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'index', check_str=base.PROJECT_READER_OR_ADMIN,
        description='List volume attachments for an instance',
        operations=[{'method': 'GET', 'path': _COLLECTION}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'create', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Attach a volume to an instance',
        operations=[{'method': 'POST', 'path': _COLLECTION}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'show', check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show details of a volume attachment',
        operations=[{'method': 'GET', 'path': _MEMBER}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'update', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Update a volume attachment (the swap policy alone decides a '
                    'request that also changes the volume)',
        operations=[{'method': 'PUT', 'path': _MEMBER}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'swap', check_str='rule:service_or_admin',
        description='Update a volume attachment with a different volumeId',
        operations=[{'method': 'PUT', 'path': _MEMBER}], scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=POLICY_ROOT % 'delete', check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Detach a volume from an instance',
        operations=[{'method': 'DELETE', 'path': _MEMBER}], scope_types=['project']),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
