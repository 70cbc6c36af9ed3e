"""Default policy rules in code, one module per resource; ``list_rules`` feeds oslo.policy."""
from __future__ import annotations

import itertools

from oslo_policy import policy

from novalite.policies import (
    admin_actions,
    admin_password,
    aggregates,
    attach_interfaces,
    availability_zone,
    base,
    console_output,
    create_backup,
    deferred_delete,
    flavor_access,
    flavors,
    floating_ip_pools,
    floating_ips,
    hosts,
    hypervisors,
    instance_actions,
    ips,
    keypairs,
    limits,
    lock_server,
    migrate_server,
    migrations,
    multinic,
    networks,
    pause_server,
    quota_class_sets,
    quota_sets,
    rescue,
    security_groups,
    server_diagnostics,
    server_external_events,
    server_groups,
    server_images,
    server_metadata,
    server_migrations,
    server_shares,
    server_tags,
    servers,
    services,
    shelve,
    simple_tenant_usage,
    suspend_server,
    trigger_crash_dump,
)


def list_rules() -> list[policy.RuleDefault]:
    return list(itertools.chain(
        base.list_rules(), flavors.list_rules(), flavor_access.list_rules(),
        servers.list_rules(), server_metadata.list_rules(), server_tags.list_rules(),
        instance_actions.list_rules(), keypairs.list_rules(), services.list_rules(),
        limits.list_rules(), quota_sets.list_rules(), quota_class_sets.list_rules(),
        availability_zone.list_rules(), aggregates.list_rules(), server_groups.list_rules(),
        hypervisors.list_rules(), console_output.list_rules(), migrations.list_rules(),
        hosts.list_rules(),
        server_migrations.list_rules(), simple_tenant_usage.list_rules(),
        server_shares.list_rules(),
        server_diagnostics.list_rules(), server_external_events.list_rules(),
        pause_server.list_rules(), suspend_server.list_rules(), lock_server.list_rules(),
        rescue.list_rules(), admin_actions.list_rules(), admin_password.list_rules(),
        deferred_delete.list_rules(), trigger_crash_dump.list_rules(),
        server_images.list_rules(), create_backup.list_rules(), shelve.list_rules(),
        migrate_server.list_rules(), ips.list_rules(), attach_interfaces.list_rules(),
        multinic.list_rules(), security_groups.list_rules(), networks.list_rules(),
        floating_ips.list_rules(), floating_ip_pools.list_rules()))
