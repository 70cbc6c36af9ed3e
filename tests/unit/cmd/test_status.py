"""novalite-status upgrade check, from an empty deployment to a ready one."""
from __future__ import annotations

import json

import pytest

from novalite import objects
from novalite.db import migration
from tests.fixtures import databases
from tests.unit.cmd.deployment import Deployment


@pytest.fixture
def dep(tmp_path, capsys):
    objects.register_all()
    gen = databases.database_factory('sqlite', tmp_path)
    yield Deployment(next(gen), tmp_path, capsys)
    gen.close()


def _check(dep: Deployment) -> tuple[int, dict[str, tuple[int, str | None]]]:
    rc, out = dep.status('upgrade', 'check', '--json')
    checks = json.loads(out)['checks']
    return rc, {c['check']: (c['result'], c['details']) for c in checks}


def test_upgrade_check_follows_the_setup(dep):
    rc, checks = _check(dep)
    assert rc == 2
    assert 'api_db sync' in checks['Cells v2'][1]
    assert checks['API DB/cell DB at head'][0] == 2

    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'map_cell0')[0] == 0
    rc, checks = _check(dep)
    assert rc == 2
    assert 'at least two cell mappings' in checks['Cells v2'][1]
    details = checks['API DB/cell DB at head'][1]
    assert 'The database of cell' in details and 'run "novalite-manage db sync"' in details

    assert dep.manage('db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 0
    rc, checks = _check(dep)
    assert rc == 0
    assert checks['Cells v2'] == (0, 'No host mappings or compute nodes were found. Remember '
                                     'to run command "novalite-manage cell_v2 discover_hosts" '
                                     'when new compute hosts are deployed.')
    assert checks['API DB/cell DB at head'] == (0, None)

    dep.add_compute_node('compute1')
    rc, checks = _check(dep)
    assert rc == 2
    assert '1 in cell' in checks['Cells v2'][1] and 'discover_hosts' in checks['Cells v2'][1]

    assert dep.manage('cell_v2', 'discover_hosts')[0] == 0
    rc, checks = _check(dep)
    assert rc == 0
    assert checks['Cells v2'] == (0, None)


def test_upgrade_check_reports_a_cell_database_behind(dep):
    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'simple_cell_setup')[0] == 0
    assert dep.status('upgrade', 'check')[0] == 0

    migration.db_sync('main', version='base', url=dep.cell0_url)

    rc, checks = _check(dep)
    assert rc == 2
    assert checks['Cells v2'][0] == 0
    assert 'The database of cell 00000000-0000-0000-0000-000000000000(cell0) is at ' \
           'revision None' in checks['API DB/cell DB at head'][1]
    # The human-readable table, too.
    rc, out = dep.status('upgrade', 'check')
    assert rc == 2 and 'Result: Failure' in out
