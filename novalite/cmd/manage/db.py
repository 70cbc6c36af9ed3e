"""``novalite-manage api_db`` and ``db``: schema migrations and, in ``db``, the upkeep of
the cell databases' rows: archive of soft-deleted rows to the shadow tables, their purge,
and the online data migrations (the work is in ``novalite.db.main.archive`` and
``novalite.db.online_migrations``; see docs/ops-db.md)."""
from __future__ import annotations

import datetime
import sys
import time
from collections.abc import Callable

import prettytable
from dateutil import parser as dateutil_parser
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

from novalite import context as nl_context
from novalite import exception, objects
from novalite.cmd.manage.common import args
from novalite.conf import CONF
from novalite.db import engine, migration, online_migrations
from novalite.db.main import archive

LOG = logging.getLogger(__name__)
# The largest --max_rows: a signed 32-bit integer, as Nova's.
MAX_INT = 0x7FFFFFFF


def _parse_date(value: str) -> datetime.datetime:
    """A date as ``date`` prints it or ``YYYY-MM-DD [HH:MM:SS]``, as naive UTC (the
    database's time); ValueError when it is none."""
    parsed = dateutil_parser.parse(value, fuzzy=True)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.UTC).replace(tzinfo=None)
    return parsed


def _by_table(item: tuple[str, int]) -> tuple[str, ...]:
    return (item[0],)


def _by_cell_then_table(item: tuple[str, int]) -> tuple[str, ...]:
    cell, _, table = item[0].partition('.')
    return cell, table


def _print_table(rows: dict[str, int], key: str, value: str,
                 sort_key: Callable[[tuple[str, int]], tuple[str, ...]] = _by_table) -> None:
    table = prettytable.PrettyTable([key, value])
    table.align = 'l'
    for name, count in sorted(rows.items(), key=sort_key):
        table.add_row([name, count])
    print(table)


def _or_255(fn: Callable[[], int]) -> int:
    """Nova's answer to an error nothing foresaw: the traceback logged, exit 255 (not
    Python's 1, which means "rows archived")."""
    try:
        return fn()
    except Exception as exc:
        LOG.exception('Unexpected error')
        print('An error has occurred:\n%s' % exc)
        return 255


_API_DB_ERRORS = (RuntimeError, db_exc.DBError, sa_exc.SQLAlchemyError)


def _cells() -> objects.CellMappingList:
    return objects.CellMappingList.get_all(nl_context.get_admin_context())


class _Archive:
    """archive_deleted_rows' walk over cells and batches, and its tally."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.archived: dict[str, int] = {}

    def run(self, max_rows: int, before: str | None, until_complete: bool, purge: bool,
            all_cells: bool, task_log: bool, sleep: int) -> int:
        if max_rows < 1:
            print('Must supply a positive value for max_rows')
            return 2
        if max_rows > MAX_INT:
            print('max rows must be <= %d' % MAX_INT)
            return 2
        try:
            # The API database takes the archived instances' mappings: it must answer.
            cells = _cells()
        except _API_DB_ERRORS:
            print('Failed to connect to API DB so aborting this archival attempt. Please '
                  'check your config file to make sure that [api_database] connection is '
                  'set and run this command again.')
            return 3
        try:
            before_date = _parse_date(before) if before else None
        except (ValueError, OverflowError) as exc:
            print('Invalid value for --before: %s' % exc)
            return 4
        targets = ([(cell.name or cell.uuid, cell.database_connection) for cell in cells]
                   if all_cells else [(None, engine.cell_url())])
        if until_complete and self.verbose:
            sys.stdout.write('Archiving..')
        total = 0
        interrupted = False
        for name, url in targets:
            if not until_complete and total >= max_rows:
                break
            limit = max_rows if until_complete else max_rows - total
            try:
                total += self._cell(name, url, limit, until_complete, before_date, task_log,
                                    sleep)
            except KeyboardInterrupt:
                interrupted = True
                break
        self._report(until_complete, interrupted, all_cells)
        if self.archived and purge:
            if self.verbose:
                print('Rows were archived, running purge...')
            _purge(None, True, self.verbose, all_cells)
        return int(bool(self.archived))

    def _cell(self, name: str | None, url: str, limit: int, until_complete: bool,
              before: datetime.datetime | None, task_log: bool, sleep: int) -> int:
        total = 0
        while True:
            batch = archive.archive_batch(url, limit, before, task_log)
            total += batch.total
            for table, rows in batch.rows.items():
                self._add(table if name is None else '%s.%s' % (name, table), rows)
            if batch.instances:
                for table, rows in archive.archive_api_rows(batch.instances).items():
                    self._add(table, rows)
            if not until_complete or not batch.total:
                return total
            if self.verbose:
                sys.stdout.write('.')
                sys.stdout.flush()
            time.sleep(sleep)

    def _add(self, table: str, rows: int) -> None:
        self.archived[table] = self.archived.get(table, 0) + rows

    def _report(self, until_complete: bool, interrupted: bool, all_cells: bool) -> None:
        if until_complete and self.verbose:
            print('.stopped' if interrupted else '.complete')
        if not self.verbose:
            return
        if self.archived:
            _print_table(self.archived, 'Table', 'Number of Rows Archived',
                         _by_cell_then_table if all_cells else _by_table)
        else:
            print('Nothing was archived.')


def _local_cell_ids() -> list[int]:
    """The ids of the cell mappings of [database] connection (none when the API
    database cannot tell: the local purge does not need it)."""
    try:
        return [cell.id for cell in _cells()
                if cell.database_connection == CONF.database.connection]
    except _API_DB_ERRORS:
        return []


def _purge(before: str | None, purge_all: bool, verbose: bool, all_cells: bool) -> int:
    if before is None and not purge_all:
        print('Either --before or --all is required')
        return 1
    try:
        before_date = _parse_date(before) if before else None
    except (ValueError, OverflowError) as exc:
        print('Invalid value for --before: %s' % exc)
        return 2
    if all_cells:
        try:
            targets = [('Cell %s' % cell.identity, cell.database_connection, [cell.id])
                       for cell in _cells()]
        except _API_DB_ERRORS:
            print('Unable to get cell list from API DB. Is it configured?')
            return 4
    else:
        targets = [('DB', engine.cell_url(), _local_cell_ids())]
    deleted = 0
    for identity, url, cell_ids in targets:
        def status(message: str, identity: str = identity) -> None:
            if verbose:
                print('%s: %s' % (identity, message))
        deleted += archive.purge_shadow_tables(url, before_date, status)
        if cell_ids:
            deleted += archive.purge_shadow_mappings(cell_ids, before_date, status)
    return 0 if deleted else 3


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

    @args('--max_rows', type=int, metavar='<number>', default=1000,
          help='Maximum number of deleted rows to archive per batch (default 1000). A '
               'soft limit: the rows depending on an archived instance move with it')
    @args('--before', metavar='<date>',
          help='Only rows deleted before this date (as "date" prints it, or '
               '"YYYY-MM-DD [HH:mm:ss]")')
    @args('--verbose', action='store_true', help='Print how many rows were archived per table')
    @args('--until-complete', action='store_true', dest='until_complete',
          help='Run batches of --max_rows until nothing is left to archive')
    @args('--purge', action='store_true',
          help='Purge all data from the shadow tables after archiving')
    @args('--all-cells', action='store_true', dest='all_cells',
          help='Archive every cell (cell0 included), not only [database] connection')
    @args('--task-log', action='store_true', dest='task_log',
          help='Also archive task_log records (never soft-deleted: those whose period '
               'ended before --before, or all)')
    @args('--sleep', type=int, metavar='<seconds>', default=0,
          help='Seconds to sleep between batches with --until-complete (default 0)')
    def archive_deleted_rows(self, max_rows: int = 1000, before: str | None = None,
                             verbose: bool = False, until_complete: bool = False,
                             purge: bool = False, all_cells: bool = False,
                             task_log: bool = False, sleep: int = 0) -> int:
        """Move soft-deleted rows to the shadow tables. Exit 0: nothing archived, 1: some
        rows archived (run again while 1), 2: bad --max_rows, 3: no API database, 4: bad
        --before, 255: unexpected error."""
        return _or_255(lambda: _Archive(verbose).run(
            max_rows, before, until_complete, purge, all_cells, task_log, sleep))

    @args('--before', metavar='<date>',
          help='Only purge shadow rows older than this date (as "date" prints it, or '
               '"YYYY-MM-DD [HH:mm:ss]")')
    @args('--all', dest='purge_all', action='store_true',
          help='Purge all rows of the shadow tables')
    @args('--verbose', action='store_true', help='Print how many rows were purged per table')
    @args('--all-cells', action='store_true', dest='all_cells',
          help='Purge every cell, not only [database] connection')
    def purge(self, before: str | None = None, purge_all: bool = False,
              verbose: bool = False, all_cells: bool = False) -> int:
        """Delete the rows of the shadow tables. Exit 0: rows deleted, 1: neither --before
        nor --all given, 2: bad --before, 3: nothing purged, 4: no API database (with
        --all-cells), 255: unexpected error."""
        return _or_255(lambda: _purge(before, purge_all, verbose, all_cells))

    @args('--max-count', metavar='<number>', dest='max_count',
          help='Maximum number of objects to migrate (default: all, in batches of 50)')
    def online_data_migrations(self, max_count: str | None = None) -> int:
        """Run the data migrations the running code needs. Exit 0: none left, 1: some
        migrated (run again), 2: a migration failed, 127: bad --max-count."""
        return online_migrations.run(nl_context.get_admin_context(), max_count)
