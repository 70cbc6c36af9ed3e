"""The base rules other policies are written with (Nova's "new defaults")."""
from __future__ import annotations

from oslo_policy import policy

RULE_ADMIN_API = 'rule:admin_api'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
RULE_ANY = '@'

rules = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       'Decides what is required for the admin role.'),
    policy.RuleDefault('admin_api', 'role:admin', 'Default rule for administrative APIs.'),
    policy.RuleDefault('project_member_api', 'role:member and project_id:%(project_id)s',
                       'Default rule for APIs a project member may use.'),
    policy.RuleDefault('project_reader_api', 'role:reader and project_id:%(project_id)s',
                       'Default rule for read-only APIs of a project.'),
    policy.RuleDefault('project_member_or_admin', 'rule:project_member_api or rule:admin_api',
                       'A project member, or an administrator.'),
    policy.RuleDefault('project_reader_or_admin', 'rule:project_reader_api or rule:admin_api',
                       'A project reader, or an administrator.'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
