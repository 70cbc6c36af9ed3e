"""novalite-status: ``upgrade check`` reports whether a deployment is ready to run."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from oslo_config import cfg
from oslo_upgradecheck import common_checks, upgradecheck

from novalite import context as nl_context
from novalite import objects, rpc
from novalite.cmd import cell_v2, status_checks
from novalite.conf import CONF
from novalite.db import migration

if TYPE_CHECKING:
    from novalite.context import RequestContext

Code = upgradecheck.Code
Result = upgradecheck.Result


def _unmapped_nodes(ctxt: RequestContext, cells: list[objects.CellMapping]) -> dict[str, int]:
    """{cell name or uuid: number of its compute nodes that no host mapping covers}."""
    cell_v2.init_bus()
    counts = {}
    for cell in cells:
        if cell.is_cell0:
            continue
        with nl_context.target_cell(ctxt, cell) as cctxt:
            count = len(objects.ComputeNodeList.get_all_by_not_mapped(cctxt, 1))
        if count:
            counts[cell.identity] = count
    return counts


def _database_state(name: str, database: str, url: str | None, command: str) -> str | None:
    """What is wrong with one database's schema, or None when it is at head."""
    try:
        current = migration.db_version(database, url=url)
    except Exception as exc:
        return '%s cannot be read (%s).' % (name, exc)
    expected = migration.head(database)
    if current != expected:
        return ('%s is at revision %s, expected %s: run "novalite-manage %s".'
                % (name, current, expected, command))
    return None


def _api_version() -> str | None:
    try:
        return migration.db_version('api')
    except Exception:
        # Unset or unreachable: the schema check below says which.
        return None


class UpgradeCommands(upgradecheck.UpgradeCommands):
    """The checks of ``novalite-status upgrade check``, as nova-status's."""

    def _check_cellsv2(self) -> Result:
        if _api_version() is None:
            return Result(Code.FAILURE, 'The API database has no schema. Run command '
                          '"novalite-manage api_db sync" and then retry.')
        objects.register_all()
        ctxt = nl_context.get_admin_context()
        cells = list(objects.CellMappingList.get_all(ctxt))
        if not any(cell.is_cell0 for cell in cells):
            return Result(Code.FAILURE, 'No cell0 mapping found. Run command '
                          '"novalite-manage cell_v2 map_cell0" and then retry.')
        if len(cells) < 2:
            return Result(Code.FAILURE, 'There needs to be at least two cell mappings, one '
                          'for cell0 and one for your first cell. Run command '
                          '"novalite-manage cell_v2 simple_cell_setup" and then retry.')
        unmapped = _unmapped_nodes(ctxt, cells)
        if unmapped:
            where = ', '.join('%d in cell %s' % (n, c) for c, n in sorted(unmapped.items()))
            return Result(Code.FAILURE, 'Compute nodes are not mapped to a cell (%s). Run '
                          'command "novalite-manage cell_v2 discover_hosts" and then retry.'
                          % where)
        if not objects.HostMappingList.get_all(ctxt):
            return Result(Code.SUCCESS, 'No host mappings or compute nodes were found. '
                          'Remember to run command "novalite-manage cell_v2 discover_hosts" '
                          'when new compute hosts are deployed.')
        return Result(Code.SUCCESS)

    def _check_schemas(self) -> Result:
        problems = [_database_state('The API database', 'api', None, 'api_db sync')]
        urls = {}
        if CONF.database.connection:
            urls[CONF.database.connection] = 'The cell database ([database] connection)'
        if _api_version() is not None:
            objects.register_all()
            for cell in objects.CellMappingList.get_all(nl_context.get_admin_context()):
                urls[cell.database_connection] = 'The database of cell %s' % cell.identity
        for url, name in urls.items():
            problems.append(_database_state(name, 'main', url, 'db sync'))
        found = [p for p in problems if p]
        if found:
            return Result(Code.FAILURE, ' '.join(found))
        return Result(Code.SUCCESS)

    def _check_placement(self) -> Result:
        return status_checks.check_placement()

    def _check_cinder(self) -> Result:
        return status_checks.check_cinder()

    def _check_old_computes(self) -> Result:
        return status_checks.check_old_computes(self._api_readable())

    def _check_machine_type_set(self) -> Result:
        return status_checks.check_machine_type_set(self._api_readable())

    def _check_service_user_token(self) -> Result:
        return status_checks.check_service_user_token()

    @staticmethod
    def _api_readable() -> bool:
        if _api_version() is None:
            return False
        objects.register_all()
        cell_v2.init_bus()
        return True

    # In Nova's order, novalite's schema check after the cells'.
    _upgrade_checks = (
        ('Cells v2', _check_cellsv2),
        ('API DB/cell DB at head', _check_schemas),
        ('Placement API', _check_placement),
        ('Cinder API', _check_cinder),
        ('Policy File JSON to YAML Migration',
         (common_checks.check_policy_json, {'conf': CONF})),
        ('Older than N-1 computes', _check_old_computes),
        ('hw_machine_type unset', _check_machine_type_set),
        ('Service User Token Configuration', _check_service_user_token),
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        return upgradecheck.main(CONF, project='novalite', upgrade_command=UpgradeCommands(),
                                 argv=argv)
    finally:
        rpc.cleanup()
        # Leaves the process-global CONF reusable (tests call main repeatedly).
        CONF.clear()
        CONF.unregister_opt(cfg.SubCommandOpt('command'))


if __name__ == '__main__':
    sys.exit(main())
