"""What moves under way (resize, cold migration, evacuation) hold on this host.

Placement keeps a moving instance's resources twice: the destination's under the
instance, the source's under the migration (Nova's migration-based allocations). The
resource tracker counts the same: each in-progress migration that involves this host
adds the new flavor at the destination and the old flavor at the source, keyed by the
instance where the instance now is, by the migration elsewhere.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from novalite import objects
from novalite.compute import claims

if TYPE_CHECKING:
    from novalite.context import RequestContext

Tracked = dict[str, tuple[str, claims.Usage]]


def migration_usage(context: RequestContext, host: str, nodename: str,
                    instances: Iterable[objects.Instance]) -> Tracked:
    """:returns: {instance or migration uuid: (nodename, Usage)} to lay over the usage
    of the host's own instances"""
    migrations = objects.MigrationList.get_in_progress_by_host_and_node(context, host,
                                                                        nodename)
    if not migrations:
        return {}
    by_uuid = {i.uuid: i for i in instances}
    missing = sorted({m.instance_uuid for m in migrations
                      if m.instance_uuid is not None} - set(by_uuid))
    if missing:
        by_uuid.update((i.uuid, i) for i in objects.InstanceList.get_by_uuids(context,
                                                                             missing))
    usage: Tracked = {}
    for migration in migrations:
        if migration.instance_uuid is None:
            continue
        instance = by_uuid.get(migration.instance_uuid)
        if instance is None or instance.deleted:
            continue
        usage.update(_usage_of(migration, instance, host, nodename))
    return usage


def _usage_of(migration: objects.Migration, instance: objects.Instance, host: str,
              nodename: str) -> Tracked:
    old = _flavor(instance, 'old_flavor') or instance.flavor
    new = _flavor(instance, 'new_flavor') or instance.flavor
    wanted = []
    if migration.dest_compute == host and migration.dest_node in (None, nodename):
        wanted.append(claims.Usage.of_flavor(new))
    if migration.source_compute == host and migration.source_node in (None, nodename):
        wanted.append(claims.Usage.of_flavor(old))
    if not wanted:
        return {}
    if instance.host == host:
        usage = {instance.uuid: (nodename, wanted[0])}
        if len(wanted) > 1:  # a resize on the same host holds both flavors
            usage[migration.uuid] = (nodename, wanted[1])
        return usage
    return {migration.uuid: (nodename, wanted[0])}


def _flavor(instance: objects.Instance, name: str) -> objects.Flavor | None:
    return getattr(instance, name) if instance.obj_attr_is_set(name) else None
