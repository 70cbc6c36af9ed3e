"""novalite-manage end to end: migrations and cells v2 set-up on real databases."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.cmd import cell_v2
from novalite.conf import CONF
from novalite.db import migration
from tests.fixtures import databases
from tests.unit.cmd.deployment import Deployment

CELL0 = '00000000-0000-0000-0000-000000000000'


@pytest.fixture
def sqlite_deployment(tmp_path, capsys):
    objects.register_all()
    gen = databases.database_factory('sqlite', tmp_path)
    yield Deployment(next(gen), tmp_path, capsys)
    gen.close()


@pytest.fixture(params=['mysql', 'postgresql'])
def server_deployment(request, tmp_path, capsys):
    objects.register_all()
    gen = databases.database_factory(request.param, tmp_path)
    yield Deployment(next(gen), tmp_path, capsys)
    gen.close()


def _cells(dep: Deployment) -> dict:
    CONF.set_override('connection', dep.api_url, group='api_database')
    try:
        return {c.name: c for c in objects.CellMappingList.get_all(
            nl_context.get_admin_context())}
    finally:
        CONF.clear_override('connection', group='api_database')


def _hosts(dep: Deployment) -> dict[str, str]:
    CONF.set_override('connection', dep.api_url, group='api_database')
    try:
        return {m.host: m.cell_mapping.name for m in objects.HostMappingList.get_all(
            nl_context.get_admin_context())}
    finally:
        CONF.clear_override('connection', group='api_database')


def _synced(dep: Deployment) -> None:
    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('db', 'sync', '--local_cell')[0] == 0


def test_sync_and_version(sqlite_deployment):
    dep = sqlite_deployment
    assert dep.manage('api_db', 'version') == (0, 'None\n')
    assert dep.manage('api_db', 'sync') == (0, '')
    assert dep.manage('api_db', 'version') == (0, migration.head('api') + '\n')

    rc, out = dep.manage('db', 'sync')
    assert rc == 0
    assert 'cell0 mapping not found - not syncing cell0' in out
    assert dep.manage('db', 'version') == (0, migration.head('main') + '\n')
    # VERSION goes both ways.
    assert dep.manage('db', 'sync', '--local_cell', 'base')[0] == 0
    assert migration.db_version('main', url=dep.cell_url) is None
    assert dep.manage('db', 'sync', '--local_cell', migration.head('main'))[0] == 0
    assert migration.db_version('main', url=dep.cell_url) == migration.head('main')


def test_db_sync_fails_when_api_database_is_not_migrated(sqlite_deployment):
    rc, out = sqlite_deployment.manage('db', 'sync')
    assert rc == 1
    assert 'ERROR: Could not access cell0' in out
    assert migration.db_version('main', url=sqlite_deployment.cell_url) is None


def test_map_cell0_then_db_sync_migrates_cell0(sqlite_deployment):
    dep = sqlite_deployment
    _synced(dep)
    assert dep.manage('cell_v2', 'map_cell0') == (0, '')
    assert dep.manage('cell_v2', 'map_cell0') == (0, 'Cell0 is already setup\n')
    cell0 = _cells(dep)['cell0']
    assert (cell0.uuid, cell0.transport_url) == (CELL0, 'none:///')
    assert cell0.database_connection == dep.cell0_url
    assert dep.cell0_url.endswith('_cell0.sqlite')

    assert dep.manage('db', 'sync') == (0, '')
    assert migration.db_version('main', url=dep.cell0_url) == migration.head('main')


def test_create_list_and_discover(sqlite_deployment):
    dep = sqlite_deployment
    _synced(dep)
    rc, out = dep.manage('cell_v2', 'create_cell', '--name', 'cell1', '--verbose')
    assert rc == 0
    cell1 = _cells(dep)['cell1']
    assert out == cell1.uuid + '\n'
    assert (cell1.transport_url, cell1.database_connection) == ('fake://', dep.cell_url)
    assert dep.manage('cell_v2', 'create_cell', '--name', 'again')[0] == 4
    assert dep.manage('cell_v2', 'map_cell0')[0] == 0

    assert dep.manage('cell_v2', 'discover_hosts', '--strict')[0] == 1
    node_a = dep.add_compute_node('host-a')
    node_b1 = dep.add_compute_node('host-b', 'host-b-node1')
    node_b2 = dep.add_compute_node('host-b', 'host-b-node2')

    rc, out = dep.manage('cell_v2', 'discover_hosts', '--verbose', '--strict')
    assert rc == 0
    assert 'Skipping cell0 since it does not contain hosts.' in out
    assert "Creating host mapping for compute host 'host-a': %s" % node_a in out
    assert 'Found 2 unmapped computes in cell: %s' % cell1.uuid in out
    assert _hosts(dep) == {'host-a': 'cell1', 'host-b': 'cell1'}
    assert [dep.node_mapped(n) for n in (node_a, node_b1, node_b2)] == [1, 1, 1]
    # Nothing new: --strict says so, without --strict it is still a success.
    assert dep.manage('cell_v2', 'discover_hosts', '--strict')[0] == 1
    assert dep.manage('cell_v2', 'discover_hosts', '--cell_uuid', cell1.uuid)[0] == 0

    rc, out = dep.manage('cell_v2', 'list_cells')
    assert rc == 0
    lines = [line for line in out.splitlines() if '|' in line]
    assert [line.split('|')[1].strip() for line in lines] == ['Name', 'cell0', 'cell1']
    rc, out = dep.manage('cell_v2', 'list_hosts')
    assert rc == 0 and 'host-a' in out and 'host-b' in out and cell1.uuid in out


def test_create_cell_exit_codes(sqlite_deployment):
    dep = sqlite_deployment
    _synced(dep)
    cell_v2.configured_transport_url()
    CONF.set_override('transport_url', '')
    try:
        rc, out = dep.manage('cell_v2', 'create_cell')
    finally:
        CONF.clear_override('transport_url')
    assert rc == 2
    assert 'Must specify --transport-url' in out
    assert dep.manage('cell_v2', 'create_cell', '--transport-url', 'no-scheme')[0] == 2
    CONF.set_override('connection', '', group='database')
    try:
        assert dep.manage('cell_v2', 'create_cell')[0] == 3
    finally:
        CONF.clear_override('connection', group='database')
    assert dep.manage('cell_v2', 'create_cell', '--disabled')[0] == 0
    assert dep.manage('cell_v2', 'create_cell')[0] == 4
    other = 'sqlite:///' + dep.cell_url.removeprefix('sqlite:///') + '.other'
    assert dep.manage('cell_v2', 'create_cell', '--name', 'two',
                      '--database_connection', other)[0] == 0
    cells = _cells(dep)
    assert cells[None].disabled is True
    assert cells['two'].disabled is False and cells['two'].database_connection == other


def test_list_cells_masks_passwords_unless_verbose(sqlite_deployment):
    dep = sqlite_deployment
    _synced(dep)
    assert dep.manage('cell_v2', 'create_cell', '--name', 'remote',
                      '--transport-url', 'rabbit://nova:s3cret@mq:5672/',
                      '--database_connection',
                      'mysql+pymysql://nova:dbpass@db/nova?charset=utf8')[0] == 0
    rc, out = dep.manage('cell_v2', 'list_cells')
    assert rc == 0
    assert 'rabbit://nova:****@mq:5672/' in out
    assert 'mysql+pymysql://nova:****@db/nova?charset=utf8' in out
    assert 's3cret' not in out and 'dbpass' not in out
    rc, out = dep.manage('cell_v2', 'list_cells', '--verbose')
    assert 's3cret' in out and 'dbpass' in out


def test_simple_cell_setup(sqlite_deployment):
    dep = sqlite_deployment
    assert dep.manage('api_db', 'sync')[0] == 0
    rc, out = dep.manage('cell_v2', 'simple_cell_setup')
    assert rc == 1 and 'run "novalite-manage db sync" first' in out
    assert _cells(dep) == {}
    assert dep.manage('db', 'sync')[0] == 0
    node = dep.add_compute_node('compute1')

    rc, out = dep.manage('cell_v2', 'simple_cell_setup')
    assert rc == 0, out
    cells = _cells(dep)
    assert set(cells) == {'cell0', 'cell1'}
    assert cells['cell1'].database_connection == dep.cell_url
    assert migration.db_version('main', url=dep.cell0_url) == migration.head('main')
    assert _hosts(dep) == {'compute1': 'cell1'}
    assert dep.node_mapped(node) == 1

    # Again: nothing is duplicated.
    assert dep.manage('cell_v2', 'simple_cell_setup', '--transport-url', 'fake://')[0] == 0
    assert set(_cells(dep)) == {'cell0', 'cell1'}


def test_delete_cell(sqlite_deployment):
    dep = sqlite_deployment
    _synced(dep)
    assert dep.manage('cell_v2', 'simple_cell_setup')[0] == 0
    node = dep.add_compute_node('compute1')
    assert dep.manage('cell_v2', 'discover_hosts')[0] == 0
    cell1 = _cells(dep)['cell1']

    assert dep.manage('cell_v2', 'delete_cell', '--cell_uuid', 'nope')[0] == 1
    assert dep.manage('cell_v2', 'delete_cell', '--cell_uuid', cell1.uuid)[0] == 2
    assert dep.manage('cell_v2', 'delete_cell', '--cell_uuid', cell1.uuid, '--force')[0] == 0
    assert set(_cells(dep)) == {'cell0'}
    assert _hosts(dep) == {}
    # The node can be discovered again into a new cell.
    assert dep.node_mapped(node) == 0


def test_cell0_default_connection():
    cases = {
        'sqlite:////var/lib/novalite/nova.sqlite': 'sqlite:////var/lib/novalite/nova_cell0.sqlite',
        'sqlite:///relative.db': 'sqlite:///relative_cell0.db',
        'mysql+pymysql://nova:p%40ss@db:3306/nova?charset=utf8':
            'mysql+pymysql://nova:p%40ss@db:3306/nova_cell0?charset=utf8',
        'postgresql+psycopg2://nova@db/nova': 'postgresql+psycopg2://nova@db/nova_cell0',
        'sqlite://': None,
    }
    for url, expected in cases.items():
        CONF.set_override('connection', url, group='database')
        try:
            assert cell_v2.cell0_default_connection() == expected, url
        finally:
            CONF.clear_override('connection', group='database')


def test_manage_on_database_servers(server_deployment):
    dep = server_deployment
    assert dep.manage('api_db', 'sync') == (0, '')
    assert dep.manage('cell_v2', 'map_cell0') == (0, '')
    assert dep.manage('db', 'sync') == (0, '')
    for url in (dep.cell_url, dep.cell0_url):
        assert migration.db_version('main', url=url) == migration.head('main')
    assert migration.db_version('api', url=dep.api_url) == migration.head('api')
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 0
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 4
    cells = _cells(dep)
    assert cells['cell0'].database_connection == dep.cell0_url
    assert cells['cell1'].database_connection == dep.cell_url

    node = dep.add_compute_node('compute1')
    assert dep.manage('cell_v2', 'discover_hosts', '--strict')[0] == 0
    assert _hosts(dep) == {'compute1': 'cell1'}
    assert dep.node_mapped(node) == 1
