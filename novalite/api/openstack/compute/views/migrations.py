"""Views of migrations: the os-migrations list and a server's live migrations."""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common
from novalite.objects import migration as migration_obj

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import wsgi

_FIELDS = ('id', 'source_node', 'dest_node', 'source_compute', 'dest_compute', 'dest_host',
           'status', 'instance_uuid', 'old_instance_type_id', 'new_instance_type_id')
# Shown as null to whom the ``index:host`` policy denies them (the keys stay, as in Nova).
_HOST_FIELDS = ('source_compute', 'source_node', 'dest_compute', 'dest_host', 'dest_node')


def hide_hosts(body: dict) -> dict:
    """``body`` with its host and node fields null."""
    body.update(dict.fromkeys(_HOST_FIELDS))
    return body


def _time(value: datetime.datetime | None) -> str | None:
    """Nova's rendering of migration timestamps: naive UTC with microseconds."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.isoformat(timespec='microseconds')


def _in_progress_live(migration: objects.Migration) -> bool:
    return (migration.migration_type == 'live-migration'
            and migration.status in migration_obj.LIVE_IN_PROGRESS)


class ViewBuilder(common.ViewBuilder):
    """2.23 adds ``migration_type`` and links to in-progress live migrations, 2.59
    ``uuid`` and next links, 2.80 ``user_id`` and ``project_id``."""

    _collection_name = 'os-migrations'

    def migration(self, req: wsgi.Request, migration: objects.Migration) -> dict:
        body = {name: getattr(migration, name) for name in _FIELDS}
        body['created_at'] = _time(migration.created_at)
        body['updated_at'] = _time(migration.updated_at)
        if avr.is_supported(req, '2.23'):
            body['migration_type'] = migration.migration_type
            if _in_progress_live(migration):
                body['links'] = self._get_links(
                    req, str(migration.id), 'servers/%s/migrations' % migration.instance_uuid)
        if avr.is_supported(req, '2.59'):
            body['uuid'] = migration.uuid
        if avr.is_supported(req, '2.80'):
            body['user_id'] = migration.user_id
            body['project_id'] = migration.project_id
        return body

    def index(self, req: wsgi.Request, migrations: list, paged: bool) -> dict:
        # Hidden migrations (parts of a cross-cell move) are never shown.
        shown = [self.migration(req, m) for m in migrations if not m.hidden]
        body: dict = {'migrations': shown}
        if paged:
            links = self._get_collection_links(req, shown, self._collection_name, 'uuid')
            if links:
                body['migrations_links'] = links
        return body

    @staticmethod
    def server_migration(req: wsgi.Request, migration: objects.Migration) -> dict:
        """One in-progress live migration of a server (2.23), with the copy progress
        the source's driver last saved in the Migration: bytes of memory and of disk
        in all, copied and left (null until the driver reports them, and always for a
        driver that does not)."""
        body = {
            'id': migration.id,
            'server_uuid': migration.instance_uuid,
            'source_compute': migration.source_compute,
            'source_node': migration.source_node,
            'dest_compute': migration.dest_compute,
            'dest_node': migration.dest_node,
            'dest_host': migration.dest_host,
            'status': migration.status,
            'created_at': _time(migration.created_at),
            'updated_at': _time(migration.updated_at),
        }
        for part in ('memory', 'disk'):
            for counter in ('total', 'processed', 'remaining'):
                name = '%s_%s' % (part, counter)
                body[name + '_bytes'] = getattr(migration, name)
        if avr.is_supported(req, '2.59'):
            body['uuid'] = migration.uuid
        if avr.is_supported(req, '2.80'):
            body['user_id'] = migration.user_id
            body['project_id'] = migration.project_id
        return body
