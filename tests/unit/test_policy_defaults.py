"""Every policy rule novalite registers has Nova 34's default, name for name.

The table below is Nova 34's policy-in-code (nova/policies/*.py), written down by hand
as data: name -> (check string, scope types, deprecated rule (name, check) or None).
A rule novalite registers must match its row, unless it is listed in DELIBERATE with
the reason. Nova rules novalite does not register must be listed in NOT_SERVED, so a
rule that goes missing is noticed; rules added later are checked as soon as they exist.
"""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import policies, policy

ADMIN = 'rule:context_is_admin'
MEMBER = 'rule:project_member_or_admin'
READER = 'rule:project_reader_or_admin'
MANAGER = 'rule:project_manager_or_admin'
SERVICE = 'rule:service_or_admin'
ANY = '@'
OWNER = 'rule:admin_or_owner'
ADMIN_API = 'rule:admin_api'
P = ('project',)

NOVA_34: dict[str, tuple[str, tuple[str, ...], tuple[str, str] | None]] = {
    # nova/policies/admin_actions.py
    'os_compute_api:os-admin-actions:reset_state': (ADMIN, P, None),
    'os_compute_api:os-admin-actions:inject_network_info': (ADMIN, P, None),
    # nova/policies/admin_password.py
    'os_compute_api:os-admin-password': (MEMBER, P, None),
    # nova/policies/aggregates.py
    'os_compute_api:os-aggregates:set_metadata': (ADMIN, P, None),
    'os_compute_api:os-aggregates:add_host': (ADMIN, P, None),
    'os_compute_api:os-aggregates:create': (ADMIN, P, None),
    'os_compute_api:os-aggregates:remove_host': (ADMIN, P, None),
    'os_compute_api:os-aggregates:update': (ADMIN, P, None),
    'os_compute_api:os-aggregates:index': (ADMIN, P, None),
    'os_compute_api:os-aggregates:delete': (ADMIN, P, None),
    'os_compute_api:os-aggregates:show': (ADMIN, P, None),
    'compute:aggregates:images': (ADMIN, P, None),
    # nova/policies/assisted_volume_snapshots.py
    'os_compute_api:os-assisted-volume-snapshots:create': (SERVICE, P, None),
    'os_compute_api:os-assisted-volume-snapshots:delete': (SERVICE, P, None),
    # nova/policies/attach_interfaces.py
    'os_compute_api:os-attach-interfaces:list':
        (READER, P, ('os_compute_api:os-attach-interfaces', OWNER)),
    'os_compute_api:os-attach-interfaces:show':
        (READER, P, ('os_compute_api:os-attach-interfaces', OWNER)),
    'os_compute_api:os-attach-interfaces:create':
        (MEMBER, P, ('os_compute_api:os-attach-interfaces', OWNER)),
    'os_compute_api:os-attach-interfaces:delete':
        (MEMBER, P, ('os_compute_api:os-attach-interfaces', OWNER)),
    # nova/policies/availability_zone.py
    'os_compute_api:os-availability-zone:list': (ANY, P, None),
    'os_compute_api:os-availability-zone:detail': (ADMIN, P, None),
    # nova/policies/baremetal_nodes.py
    'os_compute_api:os-baremetal-nodes:list':
        (ADMIN, P, ('os_compute_api:os-baremetal-nodes', ADMIN_API)),
    'os_compute_api:os-baremetal-nodes:show':
        (ADMIN, P, ('os_compute_api:os-baremetal-nodes', ADMIN_API)),
    # nova/policies/base.py
    'context_is_admin': ('role:admin', (), ('rule:admin_api', 'is_admin:True')),
    'admin_or_owner': ('is_admin:True or project_id:%(project_id)s', (), None),
    'admin_api': ('is_admin:True', (), None),
    'project_manager_api':
        ('role:manager and project_id:%(project_id)s', (), ('rule:admin_api', 'is_admin:True')),
    'project_member_api':
        ('role:member and project_id:%(project_id)s', (),
         ('rule:admin_or_owner', 'is_admin:True or project_id:%(project_id)s')),
    'project_reader_api':
        ('role:reader and project_id:%(project_id)s', (),
         ('rule:admin_or_owner', 'is_admin:True or project_id:%(project_id)s')),
    'service_api': ('role:service', (), ('rule:admin_api', 'is_admin:True')),
    'project_manager_or_admin':
        ('rule:project_manager_api or rule:context_is_admin', (),
         ('rule:admin_api', 'is_admin:True')),
    'project_member_or_admin':
        ('rule:project_member_api or rule:context_is_admin', (),
         ('rule:admin_or_owner', 'is_admin:True or project_id:%(project_id)s')),
    'project_reader_or_admin':
        ('rule:project_reader_api or rule:context_is_admin', (),
         ('rule:admin_or_owner', 'is_admin:True or project_id:%(project_id)s')),
    'service_or_admin':
        ('rule:service_api or rule:context_is_admin', (), ('rule:admin_api', 'is_admin:True')),
    # nova/policies/console_auth_tokens.py
    'os_compute_api:os-console-auth-tokens': (ADMIN, P, None),
    # nova/policies/console_output.py
    'os_compute_api:os-console-output': (MEMBER, P, None),
    # nova/policies/create_backup.py
    'os_compute_api:os-create-backup': (MEMBER, P, None),
    # nova/policies/deferred_delete.py
    'os_compute_api:os-deferred-delete:restore':
        (MEMBER, P, ('os_compute_api:os-deferred-delete', OWNER)),
    'os_compute_api:os-deferred-delete:force':
        (MEMBER, P, ('os_compute_api:os-deferred-delete', OWNER)),
    # nova/policies/evacuate.py
    'os_compute_api:os-evacuate': (ADMIN, P, None),
    # nova/policies/extended_server_attributes.py
    'os_compute_api:os-extended-server-attributes': (ADMIN, P, None),
    # nova/policies/extensions.py
    'os_compute_api:extensions': (ANY, P, None),
    # nova/policies/flavor_access.py
    'os_compute_api:os-flavor-access:add_tenant_access': (ADMIN, P, None),
    'os_compute_api:os-flavor-access:remove_tenant_access': (ADMIN, P, None),
    'os_compute_api:os-flavor-access': (ADMIN, P, ('os_compute_api:os-flavor-access', OWNER)),
    # nova/policies/flavor_extra_specs.py
    'os_compute_api:os-flavor-extra-specs:show': (READER, P, None),
    'os_compute_api:os-flavor-extra-specs:create': (ADMIN, P, None),
    'os_compute_api:os-flavor-extra-specs:update': (ADMIN, P, None),
    'os_compute_api:os-flavor-extra-specs:delete': (ADMIN, P, None),
    'os_compute_api:os-flavor-extra-specs:index': (READER, P, None),
    # nova/policies/flavor_manage.py
    'os_compute_api:os-flavor-manage:create': (ADMIN, P, None),
    'os_compute_api:os-flavor-manage:update': (ADMIN, P, None),
    'os_compute_api:os-flavor-manage:delete': (ADMIN, P, None),
    # nova/policies/floating_ip_pools.py
    'os_compute_api:os-floating-ip-pools': (ANY, P, None),
    # nova/policies/floating_ips.py
    'os_compute_api:os-floating-ips:add': (MEMBER, P, ('os_compute_api:os-floating-ips', OWNER)),
    'os_compute_api:os-floating-ips:remove': (MEMBER, P, ('os_compute_api:os-floating-ips', OWNER)),
    'os_compute_api:os-floating-ips:list': (READER, P, ('os_compute_api:os-floating-ips', OWNER)),
    'os_compute_api:os-floating-ips:create': (MEMBER, P, ('os_compute_api:os-floating-ips', OWNER)),
    'os_compute_api:os-floating-ips:show': (READER, P, ('os_compute_api:os-floating-ips', OWNER)),
    'os_compute_api:os-floating-ips:delete': (MEMBER, P, ('os_compute_api:os-floating-ips', OWNER)),
    # nova/policies/hosts.py
    'os_compute_api:os-hosts:list': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    'os_compute_api:os-hosts:show': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    'os_compute_api:os-hosts:update': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    'os_compute_api:os-hosts:reboot': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    'os_compute_api:os-hosts:shutdown': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    'os_compute_api:os-hosts:start': (ADMIN, P, ('os_compute_api:os-hosts', ADMIN_API)),
    # nova/policies/hypervisors.py
    'os_compute_api:os-hypervisors:list': (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:list-detail':
        (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:statistics':
        (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:show': (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:uptime':
        (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:search':
        (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    'os_compute_api:os-hypervisors:servers':
        (ADMIN, P, ('os_compute_api:os-hypervisors', ADMIN_API)),
    # nova/policies/instance_actions.py
    'os_compute_api:os-instance-actions:events:details': (ADMIN, P, None),
    'os_compute_api:os-instance-actions:events': (ADMIN, P, None),
    'os_compute_api:os-instance-actions:list':
        (READER, P, ('os_compute_api:os-instance-actions', OWNER)),
    'os_compute_api:os-instance-actions:show':
        (READER, P, ('os_compute_api:os-instance-actions', OWNER)),
    # nova/policies/instance_usage_audit_log.py
    'os_compute_api:os-instance-usage-audit-log:list':
        (ADMIN, P, ('os_compute_api:os-instance-usage-audit-log', ADMIN_API)),
    'os_compute_api:os-instance-usage-audit-log:show':
        (ADMIN, P, ('os_compute_api:os-instance-usage-audit-log', ADMIN_API)),
    # nova/policies/ips.py
    'os_compute_api:ips:show': (READER, P, None),
    'os_compute_api:ips:index': (READER, P, None),
    # nova/policies/keypairs.py
    'os_compute_api:os-keypairs:index': ('(rule:context_is_admin) or user_id:%(user_id)s', P, None),
    'os_compute_api:os-keypairs:create':
        ('(rule:context_is_admin) or user_id:%(user_id)s', P, None),
    'os_compute_api:os-keypairs:delete':
        ('(rule:context_is_admin) or user_id:%(user_id)s', P, None),
    'os_compute_api:os-keypairs:show': ('(rule:context_is_admin) or user_id:%(user_id)s', P, None),
    # nova/policies/limits.py
    'os_compute_api:limits': (ANY, P, None),
    'os_compute_api:limits:other_project': (ADMIN, P, ('os_compute_api:os-used-limits', ADMIN_API)),
    # nova/policies/lock_server.py
    'os_compute_api:os-lock-server:lock': (MEMBER, P, None),
    'os_compute_api:os-lock-server:unlock': (MEMBER, P, None),
    'os_compute_api:os-lock-server:unlock:unlock_override': (ADMIN, P, None),
    # nova/policies/migrate_server.py
    'os_compute_api:os-migrate-server:migrate': (MANAGER, P, None),
    'os_compute_api:os-migrate-server:migrate:host': (ADMIN, P, None),
    'os_compute_api:os-migrate-server:migrate_live': (MANAGER, P, None),
    'os_compute_api:os-migrate-server:migrate_live:host':
        (ADMIN, P, ('os_compute_api:os-migrate-server:migrate_live', ADMIN)),
    # nova/policies/migrations.py
    'os_compute_api:os-migrations:index': (MANAGER, P, None),
    'os_compute_api:os-migrations:index:all_projects':
        (ADMIN, P, ('os_compute_api:os-migrations:index', ADMIN)),
    'os_compute_api:os-migrations:index:host':
        (ADMIN, P, ('os_compute_api:os-migrations:index', ADMIN)),
    # nova/policies/multinic.py
    'os_compute_api:os-multinic:add': (MEMBER, P, ('os_compute_api:os-multinic', OWNER)),
    'os_compute_api:os-multinic:remove': (MEMBER, P, ('os_compute_api:os-multinic', OWNER)),
    # nova/policies/networks.py
    'os_compute_api:os-networks:list': (READER, P, ('os_compute_api:os-networks:view', OWNER)),
    'os_compute_api:os-networks:show': (READER, P, ('os_compute_api:os-networks:view', OWNER)),
    # nova/policies/pause_server.py
    'os_compute_api:os-pause-server:pause': (MEMBER, P, None),
    'os_compute_api:os-pause-server:unpause': (MEMBER, P, None),
    # nova/policies/quota_class_sets.py
    'os_compute_api:os-quota-class-sets:show': (ADMIN, P, None),
    'os_compute_api:os-quota-class-sets:update': (ADMIN, P, None),
    # nova/policies/quota_sets.py
    'os_compute_api:os-quota-sets:update': (ADMIN, P, None),
    'os_compute_api:os-quota-sets:defaults': (ANY, P, None),
    'os_compute_api:os-quota-sets:show': (READER, P, None),
    'os_compute_api:os-quota-sets:delete': (ADMIN, P, None),
    'os_compute_api:os-quota-sets:detail': (READER, P, None),
    # nova/policies/remote_consoles.py
    'os_compute_api:os-remote-consoles': (MEMBER, P, None),
    # nova/policies/rescue.py
    'os_compute_api:os-rescue': (MEMBER, P, None),
    'os_compute_api:os-unrescue': (MEMBER, P, ('os_compute_api:os-rescue', OWNER)),
    # nova/policies/security_groups.py
    'os_compute_api:os-security-groups:get':
        (READER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:show':
        (READER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:create':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:update':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:delete':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:rule:create':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:rule:delete':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:list':
        (READER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:add':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    'os_compute_api:os-security-groups:remove':
        (MEMBER, P, ('os_compute_api:os-security-groups', OWNER)),
    # nova/policies/server_diagnostics.py
    'os_compute_api:os-server-diagnostics': (ADMIN, P, None),
    # nova/policies/server_external_events.py
    'os_compute_api:os-server-external-events:create': (SERVICE, P, None),
    # nova/policies/server_groups.py
    'os_compute_api:os-server-groups:create': (MEMBER, P, None),
    'os_compute_api:os-server-groups:delete': (MEMBER, P, None),
    'os_compute_api:os-server-groups:index': (READER, P, None),
    'os_compute_api:os-server-groups:index:all_projects': (ADMIN, P, None),
    'os_compute_api:os-server-groups:show': (READER, P, None),
    # nova/policies/server_metadata.py
    'os_compute_api:server-metadata:index': (READER, P, None),
    'os_compute_api:server-metadata:show': (READER, P, None),
    'os_compute_api:server-metadata:create': (MEMBER, P, None),
    'os_compute_api:server-metadata:update_all': (MEMBER, P, None),
    'os_compute_api:server-metadata:update': (MEMBER, P, None),
    'os_compute_api:server-metadata:delete': (MEMBER, P, None),
    # nova/policies/server_password.py
    'os_compute_api:os-server-password:show':
        (READER, P, ('os_compute_api:os-server-password', OWNER)),
    'os_compute_api:os-server-password:clear':
        (MEMBER, P, ('os_compute_api:os-server-password', OWNER)),
    # nova/policies/server_shares.py
    'os_compute_api:os-server-shares:index': (READER, P, None),
    'os_compute_api:os-server-shares:create': (MEMBER, P, None),
    'os_compute_api:os-server-shares:show': (READER, P, None),
    'os_compute_api:os-server-shares:delete': (MEMBER, P, None),
    # nova/policies/server_tags.py
    'os_compute_api:os-server-tags:delete_all': (MEMBER, P, None),
    'os_compute_api:os-server-tags:index': (READER, P, None),
    'os_compute_api:os-server-tags:update_all': (MEMBER, P, None),
    'os_compute_api:os-server-tags:delete': (MEMBER, P, None),
    'os_compute_api:os-server-tags:update': (MEMBER, P, None),
    'os_compute_api:os-server-tags:show': (READER, P, None),
    # nova/policies/server_topology.py
    'compute:server:topology:index': (READER, P, None),
    'compute:server:topology:host:index': (ADMIN, P, None),
    # nova/policies/servers.py
    'os_compute_api:servers:index': (READER, P, None),
    'os_compute_api:servers:detail': (READER, P, None),
    'os_compute_api:servers:index:get_all_tenants': (ADMIN, P, None),
    'os_compute_api:servers:detail:get_all_tenants': (ADMIN, P, None),
    'os_compute_api:servers:allow_all_filters': (ADMIN, P, None),
    'os_compute_api:servers:show': (READER, P, None),
    'os_compute_api:servers:show:flavor-extra-specs':
        (READER, P, ('os_compute_api:os-flavor-extra-specs:index', OWNER)),
    'os_compute_api:servers:show:host_status': (ADMIN, P, None),
    'os_compute_api:servers:show:host_status:unknown-only': (ADMIN, P, None),
    'os_compute_api:servers:create': (MEMBER, P, None),
    'os_compute_api:servers:create:forced_host': (ADMIN, P, None),
    'compute:servers:create:requested_destination': (ADMIN, P, None),
    'os_compute_api:servers:create:attach_volume': (MEMBER, P, None),
    'os_compute_api:servers:create:attach_network': (MEMBER, P, None),
    'os_compute_api:servers:create:trusted_certs': (MEMBER, P, None),
    'os_compute_api:servers:create:zero_disk_flavor': (ADMIN, P, None),
    'network:attach_external_network': (ADMIN, P, None),
    'os_compute_api:servers:delete': (MEMBER, P, None),
    'os_compute_api:servers:update': (MEMBER, P, None),
    'os_compute_api:servers:confirm_resize': (MEMBER, P, None),
    'os_compute_api:servers:revert_resize': (MEMBER, P, None),
    'os_compute_api:servers:reboot': (MEMBER, P, None),
    'os_compute_api:servers:resize': (MEMBER, P, None),
    'compute:servers:resize:cross_cell': ('!', P, None),
    'os_compute_api:servers:rebuild': (MEMBER, P, None),
    'os_compute_api:servers:rebuild:trusted_certs': (MEMBER, P, None),
    'os_compute_api:servers:create_image': (MEMBER, P, None),
    'os_compute_api:servers:create_image:allow_volume_backed': (MEMBER, P, None),
    'os_compute_api:servers:start': (MEMBER, P, None),
    'os_compute_api:servers:stop': (MEMBER, P, None),
    'os_compute_api:servers:trigger_crash_dump': (MEMBER, P, None),
    # nova/policies/servers_migrations.py
    'os_compute_api:servers:migrations:show': (ADMIN, P, None),
    'os_compute_api:servers:migrations:force_complete': (MANAGER, P, None),
    'os_compute_api:servers:migrations:delete': (MANAGER, P, None),
    'os_compute_api:servers:migrations:index': (MANAGER, P, None),
    'os_compute_api:servers:migrations:index:host':
        (ADMIN, P, ('os_compute_api:servers:migrations:index', ADMIN)),
    # nova/policies/services.py
    'os_compute_api:os-services:list': (ADMIN, P, ('os_compute_api:os-services', ADMIN_API)),
    'os_compute_api:os-services:update': (ADMIN, P, ('os_compute_api:os-services', ADMIN_API)),
    'os_compute_api:os-services:delete': (ADMIN, P, ('os_compute_api:os-services', ADMIN_API)),
    # nova/policies/shelve.py
    'os_compute_api:os-shelve:shelve': (MEMBER, P, None),
    'os_compute_api:os-shelve:unshelve': (MEMBER, P, None),
    'os_compute_api:os-shelve:unshelve_to_host': (ADMIN, P, None),
    'os_compute_api:os-shelve:shelve_offload': (ADMIN, P, None),
    # nova/policies/simple_tenant_usage.py
    'os_compute_api:os-simple-tenant-usage:show': (READER, P, None),
    'os_compute_api:os-simple-tenant-usage:list': (ADMIN, P, None),
    # nova/policies/suspend_server.py
    'os_compute_api:os-suspend-server:resume': (MEMBER, P, None),
    'os_compute_api:os-suspend-server:suspend': (MEMBER, P, None),
    # nova/policies/tenant_networks.py
    'os_compute_api:os-tenant-networks:list':
        (READER, P, ('os_compute_api:os-tenant-networks', OWNER)),
    'os_compute_api:os-tenant-networks:show':
        (READER, P, ('os_compute_api:os-tenant-networks', OWNER)),
    # nova/policies/volumes.py
    'os_compute_api:os-volumes:list': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:create': (MEMBER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:detail': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:show': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:delete': (MEMBER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:snapshots:list': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:snapshots:create': (MEMBER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:snapshots:detail': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:snapshots:show': (READER, P, ('os_compute_api:os-volumes', OWNER)),
    'os_compute_api:os-volumes:snapshots:delete': (MEMBER, P, ('os_compute_api:os-volumes', OWNER)),
    # nova/policies/volumes_attachments.py
    'os_compute_api:os-volumes-attachments:index': (READER, P, None),
    'os_compute_api:os-volumes-attachments:create': (MEMBER, P, None),
    'os_compute_api:os-volumes-attachments:show': (READER, P, None),
    'os_compute_api:os-volumes-attachments:update': (MEMBER, P, None),
    'os_compute_api:os-volumes-attachments:swap': (SERVICE, P, None),
    'os_compute_api:os-volumes-attachments:delete': (MEMBER, P, None),
}

# Rules novalite registers that Nova 34 does not have, each with why.
NOVALITE_ONLY: dict[str, str] = {}

# Rules whose default differs from Nova 34 on purpose: name -> why.
DELIBERATE: dict[str, str] = {}

# Nova 34 rules novalite does not register: their APIs are not served (yet).
NOT_SERVED = frozenset({
    # assisted volume snapshots (for Cinder's remote-fs drivers)
    'os_compute_api:os-assisted-volume-snapshots:create',
    'os_compute_api:os-assisted-volume-snapshots:delete',
    # consoles (remote consoles, console auth tokens)
    'os_compute_api:os-console-auth-tokens',
    'os_compute_api:os-remote-consoles',
    # server create options novalite does not offer yet
    'os_compute_api:servers:create:attach_network',
    'os_compute_api:servers:create:trusted_certs',
    'os_compute_api:servers:create:zero_disk_flavor',
    # other APIs or checks novalite does not serve yet
    'compute:servers:resize:cross_cell',
    'os_compute_api:os-admin-actions:inject_network_info',
    'os_compute_api:os-baremetal-nodes:list',
    'os_compute_api:os-baremetal-nodes:show',
    'os_compute_api:os-tenant-networks:list',
    'os_compute_api:os-tenant-networks:show',
})


def _registered() -> dict[str, tuple[str, tuple[str, ...], tuple[str, str] | None]]:
    found = {}
    for rule in policies.list_rules():
        old = rule.deprecated_rule
        found[rule.name] = (rule.check_str, tuple(rule.scope_types or ()),
                            (old.name, old.check_str) if old else None)
    return found


def test_every_registered_rule_has_nova_34_default():
    wrong = {}
    for name, default in _registered().items():
        if name in DELIBERATE:
            continue
        if name not in NOVA_34:
            if name not in NOVALITE_ONLY:
                wrong[name] = (default, 'not a Nova 34 rule')
            continue
        if default != NOVA_34[name]:
            wrong[name] = (default, NOVA_34[name])
    assert wrong == {}


def test_every_nova_34_rule_is_registered_or_listed_as_not_served():
    missing = set(NOVA_34) - set(_registered()) - NOT_SERVED
    assert missing == set()


def test_the_lists_name_only_nova_34_rules():
    assert NOT_SERVED <= set(NOVA_34)
    assert set(DELIBERATE) <= set(NOVA_34) | set(NOVALITE_ONLY)


def test_rule_names_are_registered_once():
    names = [rule.name for rule in policies.list_rules()]
    assert len(names) == len(set(names))


@pytest.fixture
def enforcer():
    policy.reset()
    yield policy.init()
    policy.reset()


def _ctx(*roles: str, project: str = 'p1') -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='u1', project_id=project, roles=list(roles))


@pytest.mark.parametrize('rule', [
    'os_compute_api:os-migrate-server:migrate',
    'os_compute_api:os-migrate-server:migrate_live',
    'os_compute_api:os-migrations:index',
    'os_compute_api:servers:migrations:index',
    'os_compute_api:servers:migrations:delete',
    'os_compute_api:servers:migrations:force_complete',
])
def test_a_project_manager_moves_and_lists_the_own_projects_servers(enforcer, rule):
    own = {'project_id': 'p1', 'user_id': 'u1'}
    assert _ctx('manager', 'member', 'reader').can(rule, own, fatal=False)
    assert not _ctx('manager').can(rule, {'project_id': 'p2'}, fatal=False)
    assert not _ctx('member', 'reader').can(rule, own, fatal=False)
    assert _ctx('admin').can(rule, {'project_id': 'p2'}, fatal=False)


@pytest.mark.parametrize('rule', [
    'os_compute_api:os-migrate-server:migrate:host',
    'os_compute_api:os-migrate-server:migrate_live:host',
    'os_compute_api:os-migrations:index:all_projects',
    'os_compute_api:os-migrations:index:host',
    'os_compute_api:servers:migrations:index:host',
    'os_compute_api:os-evacuate',
])
def test_hosts_and_other_projects_stay_the_administrators(enforcer, rule):
    own = {'project_id': 'p1', 'user_id': 'u1'}
    assert not _ctx('manager', 'member', 'reader').can(rule, own, fatal=False)
    assert _ctx('admin').can(rule, own, fatal=False)


def test_admin_api_is_novas_deprecated_is_admin_check(enforcer):
    # Nova 34's "admin_api" checks an is_admin credential no token carries: rules
    # meant for administrators use context_is_admin (the admin role) instead.
    assert not _ctx('admin').can('admin_api', fatal=False)
    assert _ctx('admin').can('context_is_admin', fatal=False)
