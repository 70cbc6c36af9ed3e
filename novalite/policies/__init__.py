"""Default policy rules in code, one module per resource; ``list_rules`` feeds oslo.policy."""
from __future__ import annotations

import itertools

from oslo_policy import policy

from novalite.policies import base, flavors, servers, services


def list_rules() -> list[policy.RuleDefault]:
    return list(itertools.chain(base.list_rules(), flavors.list_rules(),
                                servers.list_rules(), services.list_rules()))
