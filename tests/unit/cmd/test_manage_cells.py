"""novalite-manage cell_v2 map_instances, verify_instance, map_cell_and_hosts,
update_cell and delete_host: Nova's answers and exit codes, on SQLite and MariaDB."""
from __future__ import annotations

import pytest

from novalite import objects
from novalite.cmd import cell_v2_instances
from tests.fixtures import databases
from tests.unit.cmd.deployment import Deployment

CELL0 = '00000000-0000-0000-0000-000000000000'


@pytest.fixture(params=['sqlite', 'mysql'])
def dep(request, tmp_path, capsys):
    """A deployment with its schemas, cell0 and cell1 (the configuration's cell)."""
    objects.register_all()
    gen = databases.database_factory(request.param, tmp_path)
    deployment = Deployment(next(gen), tmp_path, capsys)
    assert deployment.manage('api_db', 'sync')[0] == 0
    assert deployment.manage('cell_v2', 'map_cell0')[0] == 0
    assert deployment.manage('db', 'sync')[0] == 0
    assert deployment.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 0
    yield deployment
    gen.close()


def _cell1(dep: Deployment) -> str:
    return dep.cells()['cell1'].uuid


def _marker(dep: Deployment) -> list[str]:
    return [uuid for uuid in dep.instance_mappings() if ' ' in uuid]


def test_map_instances_in_batches_goes_on_where_the_last_run_stopped(dep):
    cell1 = _cell1(dep)
    uuids = [dep.add_instance() for _ in range(4)]
    uuids.append(dep.add_instance(deleted=True))
    # Already mapped (to no cell yet): left as it is.
    premapped = dep.add_instance()
    dep.add_instance_mapping(premapped, None)

    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                      '--max-count', '2') == (1, '')
    mappings = dep.instance_mappings()
    assert [u for u in uuids if u in mappings] == uuids[:2]
    # Nova's marker: the last instance seen, its dashes turned to spaces.
    assert _marker(dep) == [uuids[1].replace('-', ' ')]
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                      '--max-count', '2')[0] == 1
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                      '--max-count', '2')[0] == 1
    # The last batch was full: only the next run knows there is nothing left.
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                      '--max-count', '2') == (0, '')

    mappings = dep.instance_mappings()
    assert _marker(dep) == []
    assert {u: mappings[u] for u in uuids} == dict.fromkeys(uuids, cell1)
    assert mappings[premapped] is None
    # Nothing left: again 0, nothing changed.
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1)[0] == 0
    assert dep.instance_mappings() == mappings


def test_map_instances_without_max_count_maps_all_in_batches(dep, monkeypatch):
    monkeypatch.setattr(cell_v2_instances, 'BATCH_SIZE', 2)
    cell1 = _cell1(dep)
    uuids = [dep.add_instance() for _ in range(5)]
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1) == (0, '')
    assert dep.instance_mappings() == dict.fromkeys(uuids, cell1)


def test_map_instances_reset_starts_from_the_first_instance(dep):
    cell1 = _cell1(dep)
    uuids = [dep.add_instance() for _ in range(4)]
    args = ('cell_v2', 'map_instances', '--cell_uuid', cell1, '--max-count', '2')
    assert dep.manage(*args)[0] == 1
    # The first mapping lost behind novalite's back: only a reset finds it again.
    dep.remove_instance_mapping(uuids[0])
    assert dep.manage(*args)[0] == 1
    assert uuids[0] not in dep.instance_mappings()
    assert dep.manage(*args, '--reset')[0] == 1
    assert dep.instance_mappings()[uuids[0]] == cell1
    assert _marker(dep) == [uuids[1].replace('-', ' ')]


def test_map_instances_marker_of_an_archived_instance_starts_again(dep):
    cell1 = _cell1(dep)
    uuids = [dep.add_instance() for _ in range(3)]
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                      '--max-count', '2')[0] == 1
    dep.remove_instance(uuids[1])
    rc, out = dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1)
    assert rc == 0
    assert 'starting from the beginning' in out
    assert dep.instance_mappings()[uuids[2]] == cell1


def test_map_instances_exit_codes(dep):
    cell1 = _cell1(dep)
    for bad in ('0', '-3', 'many'):
        assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1,
                          '--max-count', bad) == (
            127, 'Must supply a positive value for max-count\n')
    rc, out = dep.manage('cell_v2', 'map_instances', '--cell_uuid',
                         '11111111-2222-3333-4444-555555555555')
    assert rc == 255
    assert 'was not found' in out
    # An empty cell is all mapped.
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', CELL0) == (0, '')


def test_verify_instance_answers(dep):
    cell1 = _cell1(dep)
    alive, deleted, archived, unscheduled = (dep.add_instance(), dep.add_instance(
        deleted=True), dep.add_instance(), dep.add_instance())
    assert dep.manage('cell_v2', 'map_instances', '--cell_uuid', cell1)[0] == 0
    dep.remove_instance(archived)
    dep.remove_instance(unscheduled)
    dep.remove_instance_mapping(unscheduled)
    dep.add_instance_mapping(unscheduled, None)
    unknown = '11111111-2222-3333-4444-555555555555'

    def verify(uuid: str) -> tuple[int, str]:
        return dep.manage('cell_v2', 'verify_instance', '--uuid', uuid)

    assert verify(alive) == (0, 'Instance %s is in cell: cell1 (%s)\n' % (alive, cell1))
    assert verify(unknown) == (1, 'Instance %s is not mapped to a cell (upgrade is '
                                  'incomplete) or instance does not exist\n' % unknown)
    assert verify(unscheduled) == (2, 'Instance %s is not mapped to a cell\n' % unscheduled)
    rc, out = verify(deleted)
    assert rc == 3
    assert out.startswith('The instance with uuid %s has been deleted.\n' % deleted)
    assert 'archive_deleted_rows' in out
    assert verify(archived) == (4, 'The instance with uuid %s has been archived.\n'
                                   'However its instance_mapping remains.\n' % archived)
    for uuid, rc in ((alive, 0), (unknown, 1), (unscheduled, 2), (deleted, 3),
                     (archived, 4)):
        assert dep.manage('cell_v2', 'verify_instance', '--uuid', uuid, '--quiet') == (rc, '')


def test_map_cell_and_hosts(dep):
    cell1 = _cell1(dep)
    assert dep.manage('cell_v2', 'map_cell_and_hosts') == (
        0, 'No hosts found to map to cell, exiting.\n')
    rc, out = dep.manage('cell_v2', 'map_cell_and_hosts', '--transport-url', 'no-scheme')
    assert rc == 1
    assert 'Invalid transport URL' in out

    nodes = [dep.add_compute_node('host1'), dep.add_compute_node('host2')]
    # cell1 (create_cell) is the configuration's cell already: no second mapping of it.
    assert dep.manage('cell_v2', 'map_cell_and_hosts', '--verbose') == (0, cell1 + '\n')
    assert [dep.node_mapped(n) for n in nodes] == [1, 1]
    assert set(dep.cells()) == {'cell0', 'cell1'}
    rc, out = dep.manage('cell_v2', 'list_hosts', '--cell_uuid', cell1)
    assert 'host1' in out and 'host2' in out
    assert dep.manage('cell_v2', 'map_cell_and_hosts') == (
        0, 'All hosts are already mapped to cell(s).\n')

    dep.add_compute_node('host3')
    rc, out = dep.manage('cell_v2', 'map_cell_and_hosts', '--verbose')
    assert rc == 0
    assert 'Host host1 is already mapped to cell %s\n' % cell1 in out
    assert out.endswith(cell1 + '\n')
    assert 'host3' in dep.manage('cell_v2', 'list_hosts', '--cell_uuid', cell1)[1]


def test_map_cell_and_hosts_creates_the_cell(dep):
    assert dep.manage('cell_v2', 'delete_cell', '--cell_uuid', _cell1(dep))[0] == 0
    node = dep.add_compute_node('host1')
    rc, out = dep.manage('cell_v2', 'map_cell_and_hosts', '--name', 'edge', '--verbose')
    assert rc == 0
    edge = dep.cells()['edge']
    assert out == edge.uuid + '\n'
    assert (edge.transport_url, edge.database_connection) == ('fake://', dep.cell_url)
    assert dep.node_mapped(node) == 1


def test_update_cell_exit_codes(dep):
    cell1 = _cell1(dep)
    unknown = '11111111-2222-3333-4444-555555555555'
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', unknown) == (
        1, 'Cell with uuid %s was not found.\n' % unknown)
    rc, out = dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell1,
                         '--transport-url', 'no-scheme')
    assert rc == 2
    assert 'Invalid transport URL' in out
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell1, '--disable',
                      '--enable') == (4, 'Cell cannot be disabled and enabled at the same '
                                         'time.\n')
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', CELL0, '--disable') == (
        5, 'Cell0 cannot be disabled.\n')
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell2', '--transport-url',
                      'rabbit://other:5672/', '--database_connection', dep.cell_url)[0] == 0
    cell2 = dep.cells()['cell2'].uuid
    rc, out = dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell2,
                         '--transport-url', 'fake://')
    assert rc == 3
    assert 'already exists for another cell with uuid %s' % cell1 in out
    # Nothing of a refused update is saved.
    assert dep.cells()['cell2'].transport_url == 'rabbit://other:5672/'
    assert dep.cells()['cell1'].disabled is False


def test_update_cell_changes_only_what_it_is_given(dep):
    cell1 = _cell1(dep)
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell1, '--name', 'main',
                      '--disable') == (0, '')
    main = dep.cells()['main']
    assert (main.uuid, main.disabled) == (cell1, True)
    assert (main.transport_url, main.database_connection) == ('fake://', dep.cell_url)
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell1, '--disable') == (
        0, 'Cell %s is already disabled\n' % cell1)
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', cell1, '--enable',
                      '--transport-url', 'rabbit://new:5672/') == (0, '')
    main = dep.cells()['main']
    assert (main.disabled, main.transport_url) == (False, 'rabbit://new:5672/')
    # cell0 keeps its none:/// bus but may be renamed.
    assert dep.manage('cell_v2', 'update_cell', '--cell_uuid', CELL0, '--name',
                      'zero') == (0, '')
    assert dep.cells()['zero'].transport_url == 'none:///'


def test_delete_host_exit_codes(dep):
    cell1 = _cell1(dep)
    node = dep.add_compute_node('host1')
    assert dep.manage('cell_v2', 'discover_hosts')[0] == 0
    assert dep.node_mapped(node) == 1
    unknown = '11111111-2222-3333-4444-555555555555'
    assert dep.manage('cell_v2', 'delete_host', '--cell_uuid', unknown, '--host',
                      'host1') == (1, 'Cell with uuid %s was not found.\n' % unknown)
    assert dep.manage('cell_v2', 'delete_host', '--cell_uuid', cell1, '--host',
                      'nohost') == (2, 'The host nohost was not found.\n')
    assert dep.manage('cell_v2', 'delete_host', '--cell_uuid', CELL0, '--host',
                      'host1') == (3, 'The host host1 was not found in the cell %s.\n' % CELL0)
    server = dep.add_instance(host='host1')
    dep.add_instance(host='host1', deleted=True)
    assert dep.manage('cell_v2', 'delete_host', '--cell_uuid', cell1, '--host',
                      'host1') == (4, 'There are instances on the host host1.\n')
    assert dep.node_mapped(node) == 1

    dep.remove_instance(server)
    assert dep.manage('cell_v2', 'delete_host', '--cell_uuid', cell1, '--host',
                      'host1') == (0, '')
    assert 'host1' not in dep.manage('cell_v2', 'list_hosts')[1]
    assert dep.node_mapped(node) == 0
    # Unmapped, the node is found again.
    assert dep.manage('cell_v2', 'discover_hosts', '--strict')[0] == 0
    assert 'host1' in dep.manage('cell_v2', 'list_hosts')[1]


def test_simple_cell_setup_maps_the_instances_of_a_deployment_from_before_cells(
        tmp_path, capsys):
    objects.register_all()
    gen = databases.database_factory('sqlite', tmp_path)
    dep = Deployment(next(gen), tmp_path, capsys)
    try:
        assert dep.manage('api_db', 'sync')[0] == 0
        assert dep.manage('db', 'sync', '--local_cell')[0] == 0
        dep.add_compute_node('host1')
        uuids = [dep.add_instance(host='host1') for _ in range(3)]
        assert dep.manage('cell_v2', 'simple_cell_setup')[0] == 0
        assert dep.instance_mappings() == dict.fromkeys(uuids, dep.cells()['cell1'].uuid)
    finally:
        gen.close()
