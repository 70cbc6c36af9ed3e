"""``novalite-manage api_db`` and ``db``: schema migrations (and, in ``db``, the
upkeep of the cell databases' rows)."""
from __future__ import annotations

from novalite import context as nl_context
from novalite import exception, objects
from novalite.cmd.manage.common import args
from novalite.db import migration


class ApiDbCommands:
    """Migrations of the API database."""

    @args('version', metavar='VERSION', nargs='?', help='Alembic revision (default: head)')
    def sync(self, version: str | None = None) -> int:
        """Upgrade the API database schema to the latest (or the given) version."""
        migration.db_sync('api', version)
        return 0

    def version(self) -> int:
        """Print the revision the API database is at."""
        print(migration.db_version('api'))
        return 0


class DbCommands:
    """Migrations of the cell database (and of cell0)."""

    @args('--local_cell', action='store_true',
          help='Only sync the [database] connection database, not cell0')
    @args('version', metavar='VERSION', nargs='?', help='Alembic revision (default: head)')
    def sync(self, local_cell: bool = False, version: str | None = None) -> int:
        """Upgrade the cell database schema, and cell0's once cell0 is mapped."""
        if not local_cell:
            ctxt = nl_context.get_admin_context()
            try:
                cell0 = objects.CellMapping.get_by_uuid(ctxt, objects.CellMapping.CELL0_UUID)
                migration.db_sync('main', version, url=cell0.database_connection)
            except exception.CellMappingNotFound:
                print('WARNING: cell0 mapping not found - not syncing cell0.')
            except Exception as exc:
                print('ERROR: Could not access cell0.\n'
                      'Has the API database been created and "novalite-manage api_db sync" '
                      'been run?\nHas "novalite-manage cell_v2 map_cell0" been run?\n'
                      'Is [api_database]/connection set and is the cell0 database URL '
                      'correct?\nError: %s' % exc)
                return 1
        migration.db_sync('main', version)
        return 0

    def version(self) -> int:
        """Print the revision the cell database is at."""
        print(migration.db_version('main'))
        return 0
