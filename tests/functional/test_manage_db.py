"""``novalite-manage db archive_deleted_rows`` and ``db purge`` on MariaDB, on the rows
real boots and deletes left: deleted servers (their actions, events, faults, mappings)
move to the shadow tables and are purged from there; live servers are untouched."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from novalite.db import engine
from tests.functional.mariadb_stack import MariaDBStack, manage_in, mariadb_stack  # noqa: F401

VERSION = '2.53'


def _flavor(stack: MariaDBStack, name: str, ram: int) -> str:
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': name, 'ram': ram, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack: MariaDBStack, name: str, flavor_id: str) -> str:
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': name, 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


def _count(stack: MariaDBStack, database: str, table: str, uuid: str) -> int:
    column = 'uuid' if table.endswith('instances') else 'instance_uuid'
    with engine.get_engine(stack.db_url(database)).connect() as conn:
        return conn.scalar(sa.text('SELECT COUNT(*) FROM %s WHERE %s = :u'
                                   % (table, column)), {'u': uuid})


def _events(stack: MariaDBStack, database: str, uuid: str, prefix: str = '') -> int:
    with engine.get_engine(stack.db_url(database)).connect() as conn:
        return conn.scalar(sa.text(
            'SELECT COUNT(*) FROM %sinstance_actions_events e JOIN %sinstance_actions a '
            'ON e.action_id = a.id WHERE a.instance_uuid = :u' % (prefix, prefix)), {'u': uuid})


def _rows(stack: MariaDBStack, database: str, uuid: str, prefix: str = '') -> dict[str, int]:
    """The server's rows in its cell database (or their shadows) and its mapping."""
    counts = {table: _count(stack, database, prefix + table, uuid)
              for table in ('instances', 'instance_extra', 'instance_system_metadata',
                            'instance_actions', 'instance_faults')}
    counts['events'] = _events(stack, database, uuid, prefix)
    counts['mapping'] = _count(stack, 'api', prefix + 'instance_mappings', uuid)
    return counts


@pytest.fixture(scope='module')
def servers(mariadb_stack: MariaDBStack) -> dict[str, str]:  # noqa: F811
    """Two live servers, one deleted in cell1 and one deleted in cell0 (it failed to
    schedule: ERROR with a fault)."""
    stack = mariadb_stack
    tiny = _flavor(stack, 'archive.tiny', 128)
    huge = _flavor(stack, 'archive.huge', 40000)
    ids = {name: _boot(stack, name, tiny) for name in ('live1', 'live2', 'gone')}
    ids['failed'] = _boot(stack, 'failed', huge)
    for name in ('live1', 'live2', 'gone'):
        stack.wait_for_status(ids[name], ('ACTIVE',), version=VERSION)
    failed = stack.wait_for_status(ids['failed'], ('ERROR',), version=VERSION)
    assert 'No valid host' in failed['fault']['message']
    for name in ('gone', 'failed'):
        assert stack.request('DELETE', '/servers/%s' % ids[name]).status_code == 204
        stack.wait_for_deleted(ids[name])
    return ids


def test_archive_moves_deleted_servers_and_leaves_live_ones(
        mariadb_stack: MariaDBStack, servers: dict[str, str]) -> None:  # noqa: F811
    stack = mariadb_stack
    gone, failed = servers['gone'], servers['failed']
    before = _rows(stack, 'cell1', gone)
    assert before['instances'] == 1 and before['instance_actions'] >= 2, before
    assert before['events'] >= 1 and before['mapping'] == 1, before
    failed_before = _rows(stack, 'cell0', failed)
    assert failed_before['instance_faults'] == 1, failed_before
    live_before = {name: _rows(stack, 'cell1', servers[name]) for name in ('live1', 'live2')}

    # Without --all-cells, only [database] connection's cell: cell1.
    rc, out = manage_in(stack, 'db', 'archive_deleted_rows', '--verbose')

    assert rc == 1, out
    assert '| instances ' in out and '| API_DB.instance_mappings ' in out, out
    assert _rows(stack, 'cell1', gone) == dict.fromkeys(before, 0)
    assert _rows(stack, 'cell1', gone, 'shadow_') == before
    assert _rows(stack, 'cell0', failed) == failed_before
    for name, rows in live_before.items():
        assert _rows(stack, 'cell1', servers[name]) == rows
        assert _rows(stack, 'cell1', servers[name], 'shadow_') == dict.fromkeys(rows, 0)

    rc, out = manage_in(stack, 'db', 'archive_deleted_rows', '--all-cells', '--verbose',
                        '--until-complete', '--max_rows', '5')

    assert rc == 1, out
    assert '| cell0.instances ' in out and '.complete' in out, out
    assert _rows(stack, 'cell0', failed) == dict.fromkeys(failed_before, 0)
    assert _rows(stack, 'cell0', failed, 'shadow_') == failed_before

    # The API: live servers list and show; the archived ones are gone, even for admins
    # asking for deleted servers.
    for name in ('live1', 'live2'):
        resp = stack.request('GET', '/servers/%s' % servers[name], version=VERSION)
        assert resp.status_code == 200 and resp.json()['server']['status'] == 'ACTIVE'
    for uuid in (gone, failed):
        assert stack.request('GET', '/servers/%s' % uuid, version=VERSION).status_code == 404
    listed = stack.request('GET', '/servers/detail?deleted=True', version=VERSION)
    assert listed.status_code == 200, listed.text
    assert not {gone, failed} & {s['id'] for s in listed.json()['servers']}
    listed = stack.request('GET', '/servers', version=VERSION).json()['servers']
    assert {servers['live1'], servers['live2']} <= {s['id'] for s in listed}

    assert manage_in(stack, 'db', 'archive_deleted_rows', '--all-cells') == (0, '')


def test_purge_deletes_the_shadow_rows(
        mariadb_stack: MariaDBStack, servers: dict[str, str]) -> None:  # noqa: F811
    stack = mariadb_stack
    assert manage_in(stack, 'db', 'purge')[0] == 1
    assert manage_in(stack, 'db', 'purge', '--before', 'yesterday-ish?')[0] == 2
    # Nothing was deleted before 2000.
    assert manage_in(stack, 'db', 'purge', '--all-cells', '--before', '2000-01-01')[0] == 3
    assert _rows(stack, 'cell1', servers['gone'], 'shadow_')['instances'] == 1

    rc, out = manage_in(stack, 'db', 'purge', '--all', '--all-cells', '--verbose')

    assert rc == 0, out
    assert 'Deleted 1 rows from shadow_instances' in out, out
    for name, database in (('gone', 'cell1'), ('failed', 'cell0')):
        assert set(_rows(stack, database, servers[name], 'shadow_').values()) == {0}
    for name in ('live1', 'live2'):
        assert _rows(stack, 'cell1', servers[name])['instances'] == 1
    assert manage_in(stack, 'db', 'purge', '--all', '--all-cells')[0] == 3
