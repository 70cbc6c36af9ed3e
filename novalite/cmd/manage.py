"""novalite-manage: database migrations and cells v2 set-up, as nova-manage.

``novalite-manage [--config-file F] <category> <action> [arguments]``; the categories
are ``api_db``, ``db`` and ``cell_v2``. Each action returns the process's exit code.
"""
from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable

from oslo_config import cfg

from novalite import context as nl_context
from novalite import exception, objects, rpc
from novalite.cmd import cell_v2
from novalite.conf import CONF
from novalite.db import migration

_KWARG_PREFIX = 'action_kwarg_'


def args(*names: str, **kwargs: object) -> Callable:
    """Declare one argparse argument of an action (decorators apply bottom-up)."""
    def decorator(fn: Callable) -> Callable:
        fn.__dict__.setdefault('args', []).insert(0, (names, kwargs))
        return fn
    return decorator


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


class CellV2Commands:
    """Cells v2 mappings: cell0, cells and the hosts in them."""

    @args('--database_connection', metavar='URL',
          help='cell0 database; default: [database] connection with "_cell0" appended '
               'to the database name')
    def map_cell0(self, database_connection: str | None = None) -> int:
        """Create the cell0 mapping (idempotent)."""
        return cell_v2.map_cell0(database_connection)

    @args('--name', metavar='NAME', help='Name of the new cell')
    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Message bus of the cell; default: [DEFAULT] transport_url')
    @args('--database_connection', metavar='URL',
          help='Database of the cell; default: [database] connection')
    @args('--verbose', action='store_true', help='Print the uuid of the new cell')
    @args('--disabled', action='store_true', help='Create the cell disabled')
    def create_cell(self, name: str | None = None, transport_url: str | None = None,
                    database_connection: str | None = None, verbose: bool = False,
                    disabled: bool = False) -> int:
        """Create a cell mapping. Exit 2: no transport URL, 3: no database, 4: duplicate."""
        return cell_v2.create_cell(name, transport_url, database_connection, verbose,
                                   disabled)

    @args('--verbose', action='store_true', help='Show passwords in the URLs')
    def list_cells(self, verbose: bool = False) -> int:
        """List the cell mappings."""
        return cell_v2.list_cells(verbose)

    @args('--cell_uuid', metavar='UUID', help='Only this cell')
    @args('--verbose', action='store_true', help='Say what is checked and created')
    @args('--strict', action='store_true', help='Exit 1 when no new host was mapped')
    def discover_hosts(self, cell_uuid: str | None = None, verbose: bool = False,
                       strict: bool = False) -> int:
        """Map the compute hosts of the cells that are not mapped yet."""
        return cell_v2.discover_hosts(cell_uuid, verbose, strict)

    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Message bus of cell1; default: [DEFAULT] transport_url')
    def simple_cell_setup(self, transport_url: str | None = None) -> int:
        """Map and migrate cell0, create cell1 from the configuration, map its hosts."""
        return cell_v2.simple_cell_setup(transport_url)

    @args('--cell_uuid', metavar='UUID', help='Only the hosts of this cell')
    def list_hosts(self, cell_uuid: str | None = None) -> int:
        """List the host mappings."""
        return cell_v2.list_hosts(cell_uuid)

    @args('--cell_uuid', metavar='UUID', required=True, help='The cell to delete')
    @args('--force', action='store_true', help='Also delete the host mappings of the cell')
    def delete_cell(self, cell_uuid: str, force: bool = False) -> int:
        """Delete a cell mapping with no instances (and, unless --force, no hosts)."""
        return cell_v2.delete_cell(cell_uuid, force)


CATEGORIES = {'api_db': ApiDbCommands, 'db': DbCommands, 'cell_v2': CellV2Commands}


def _actions(command: object) -> list[tuple[str, Callable]]:
    return [(name, fn) for name, fn in inspect.getmembers(command, inspect.ismethod)
            if not name.startswith('_')]


def add_command_parsers(subparsers: argparse._SubParsersAction) -> None:
    for category, cls in CATEGORIES.items():
        parser = subparsers.add_parser(category, help=cls.__doc__)
        actions = parser.add_subparsers(dest='action', metavar='<action>')
        actions.required = True
        for name, fn in _actions(cls()):
            action = actions.add_parser(name, help=fn.__doc__, description=fn.__doc__)
            kwarg_names = []
            for names, kwargs in getattr(fn, 'args', []):
                kwargs = dict(kwargs)
                if names[0].startswith('-'):
                    dest = kwargs.pop('dest', names[0].lstrip('-').replace('-', '_'))
                    kwargs['dest'] = _KWARG_PREFIX + dest
                    kwarg_names.append(dest)
                else:
                    # A positional's dest is its name: prefix it so it cannot clash.
                    kwarg_names.append(names[0])
                    names = (_KWARG_PREFIX + names[0],)
                action.add_argument(*names, **kwargs)
            action.set_defaults(action_fn=fn, action_kwarg_names=kwarg_names)


category_opt = cfg.SubCommandOpt('category', title='Command categories',
                                 handler=add_command_parsers)


def run(category: argparse.Namespace) -> int:
    """Call the action ``category`` names with the arguments it parsed."""
    kwargs = {name: getattr(category, _KWARG_PREFIX + name)
              for name in category.action_kwarg_names}
    return category.action_fn(**kwargs)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        CONF.register_cli_opt(category_opt)
    except cfg.ArgsAlreadyParsedError:
        # Called in a process that parsed CONF already (an in-process stack, tests):
        # start from unparsed, as this function leaves it.
        CONF.clear()
        CONF.register_cli_opt(category_opt)
    try:
        CONF(argv, project='novalite')
        objects.register_all()
        cell_v2.init_bus()
        try:
            return run(CONF.category) or 0
        finally:
            rpc.cleanup()
    finally:
        # The process-global CONF is reusable afterwards (tests call main repeatedly).
        CONF.clear()
        CONF.unregister_opt(category_opt)


if __name__ == '__main__':
    sys.exit(main())
