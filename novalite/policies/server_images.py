"""Policies of rebuild and createImage: Nova's ``os_compute_api:servers:rebuild*`` and
``os_compute_api:servers:create_image*`` rules (kept apart from servers.py here)."""
from __future__ import annotations

from oslo_policy import policy

from novalite.policies import base
from novalite.policies.servers import SERVERS


def _rule(name: str, check: str, description: str, action: str
          ) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=SERVERS % name, check_str=check, description=description,
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (%s)' % action}],
        scope_types=['project'])


rules: list[policy.RuleDefault] = [
    _rule('rebuild', base.PROJECT_MEMBER_OR_ADMIN, 'Rebuild a server.', 'rebuild'),
    _rule('rebuild:trusted_certs', base.PROJECT_MEMBER_OR_ADMIN,
          'Rebuild a server with trusted image certificates (2.63).', 'rebuild'),
    _rule('create_image', base.PROJECT_MEMBER_OR_ADMIN, 'Create an image of a server.',
          'createImage'),
    _rule('create_image:allow_volume_backed', base.PROJECT_MEMBER_OR_ADMIN,
          'Create an image of a volume-backed server.', 'createImage'),
]


def list_rules() -> list[policy.RuleDefault]:
    return rules
