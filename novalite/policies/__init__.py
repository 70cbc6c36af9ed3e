"""Default policy rules in code, one module per resource; ``list_rules`` feeds oslo.policy."""
from __future__ import annotations

import itertools

from oslo_policy import policy

from novalite.policies import (
    aggregates,
    availability_zone,
    base,
    console_output,
    flavor_access,
    flavors,
    hypervisors,
    instance_actions,
    keypairs,
    limits,
    migrations,
    quota_class_sets,
    quota_sets,
    server_diagnostics,
    server_external_events,
    server_groups,
    server_metadata,
    server_migrations,
    server_tags,
    servers,
    services,
    simple_tenant_usage,
)


def list_rules() -> list[policy.RuleDefault]:
    return list(itertools.chain(
        base.list_rules(), flavors.list_rules(), flavor_access.list_rules(),
        servers.list_rules(), server_metadata.list_rules(), server_tags.list_rules(),
        instance_actions.list_rules(), keypairs.list_rules(), services.list_rules(),
        limits.list_rules(), quota_sets.list_rules(), quota_class_sets.list_rules(),
        availability_zone.list_rules(), aggregates.list_rules(), server_groups.list_rules(),
        hypervisors.list_rules(), console_output.list_rules(), migrations.list_rules(),
        server_migrations.list_rules(), simple_tenant_usage.list_rules(),
        server_diagnostics.list_rules(), server_external_events.list_rules()))
