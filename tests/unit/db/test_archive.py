"""novalite-manage db archive_deleted_rows, purge and online_data_migrations on real
databases: what moves, what stays, batches, --before and the exit codes."""
from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa
from oslo_utils import uuidutils

from novalite import context as nl_context
from novalite import objects
from novalite.db import engine, online_migrations
from novalite.db.api import models as api_models
from novalite.db.main import models
from tests.fixtures import databases
from tests.unit.cmd.deployment import Deployment

OLD = datetime.datetime(2020, 1, 1)
RECENT = datetime.datetime(2026, 1, 1)
# The rows of one server in the cell database, with the table holding each.
CHILD_TABLES = ('instance_extra', 'instance_info_caches', 'instance_metadata',
                'instance_system_metadata', 'instance_faults', 'instance_actions',
                'instance_actions_events', 'block_device_mapping', 'migrations')


def _deployment(backend, tmp_path, capsys):
    objects.register_all()
    gen = databases.database_factory(backend, tmp_path)
    dep = Deployment(next(gen), tmp_path, capsys)
    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('db', 'sync', '--local_cell')[0] == 0
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 0
    return gen, dep


@pytest.fixture
def dep(tmp_path, capsys):
    gen, deployment = _deployment('sqlite', tmp_path, capsys)
    yield deployment
    gen.close()


@pytest.fixture(params=databases.BACKENDS)
def any_dep(request, tmp_path, capsys):
    gen, deployment = _deployment(request.param, tmp_path, capsys)
    yield deployment
    gen.close()


def _cell_id(dep: Deployment) -> int:
    with engine.get_engine(dep.api_url).connect() as conn:
        return conn.scalar(sa.select(api_models.CellMapping.__table__.c.id))


def _server(dep: Deployment, deleted_at: datetime.datetime | None = None,
            url: str | None = None) -> str:
    """A server with a row in every table that depends on it, in its cell and the API
    database; soft-deleted (as the compute leaves it) when ``deleted_at`` is given."""
    uuid = uuidutils.generate_uuid()
    with sa.orm.Session(engine.get_engine(url or dep.cell_url)) as session, session.begin():
        instance = models.Instance(uuid=uuid, project_id='p', display_name='vm')
        session.add(instance)
        session.flush()
        action = models.InstanceAction(instance_uuid=uuid, action='create')
        session.add_all([
            models.InstanceExtra(instance_uuid=uuid, flavor='{}'),
            models.InstanceInfoCache(instance_uuid=uuid, network_info='[]'),
            models.InstanceMetadata(instance_uuid=uuid, key='k', value='v'),
            models.InstanceSystemMetadata(instance_uuid=uuid, key='k', value='v'),
            models.InstanceFault(instance_uuid=uuid, code=500, message='boom'),
            action,
            models.BlockDeviceMapping(instance_uuid=uuid, uuid=uuidutils.generate_uuid()),
            models.Migration(instance_uuid=uuid, uuid=uuidutils.generate_uuid()),
            models.Tag(resource_id=uuid, tag='t'),
            models.ConsoleAuthToken(token_hash=uuid, console_type='novnc', host='h',
                                    port=5900, instance_uuid=uuid, expires=0),
        ])
        session.flush()
        session.add(models.InstanceActionEvent(action_id=action.id, event='build'))
        if deleted_at is not None:
            instance.deleted = instance.id
            instance.deleted_at = deleted_at
    cell_id = _cell_id(dep)
    with sa.orm.Session(engine.get_engine(dep.api_url)) as session, session.begin():
        group = api_models.InstanceGroup(uuid=uuidutils.generate_uuid())
        session.add(group)
        session.flush()
        session.add_all([
            api_models.InstanceMapping(instance_uuid=uuid, cell_id=cell_id,
                                       project_id='p'),
            api_models.RequestSpec(instance_uuid=uuid, spec='{}'),
            api_models.InstanceGroupMember(instance_uuid=uuid, group_id=group.id)])
    return uuid


def _count(url: str, table: str, uuid: str | None = None) -> int:
    meta_table = sa.Table(table, sa.MetaData(), autoload_with=engine.get_engine(url))
    query = sa.select(sa.func.count()).select_from(meta_table)
    if uuid is not None:
        column = 'uuid' if table.endswith('instances') else (
            'resource_id' if table == 'tags' else 'instance_uuid')
        if table.endswith('instance_actions_events'):
            return _events(url, table, uuid)
        query = query.where(meta_table.c[column] == uuid)
    with engine.get_engine(url).connect() as conn:
        return conn.scalar(query)


def _events(url: str, table: str, uuid: str) -> int:
    prefix = 'shadow_' if table.startswith('shadow_') else ''
    with engine.get_engine(url).connect() as conn:
        return conn.scalar(sa.text(
            'SELECT COUNT(*) FROM %sinstance_actions_events e JOIN %sinstance_actions a '
            'ON e.action_id = a.id WHERE a.instance_uuid = :u' % (prefix, prefix)), {'u': uuid})


def _where(dep: Deployment, uuid: str, shadow: bool) -> dict[str, int]:
    prefix = 'shadow_' if shadow else ''
    counts = {table: _count(dep.cell_url, prefix + table, uuid)
              for table in ('instances', *CHILD_TABLES)}
    counts['instance_mappings'] = _count(dep.api_url, prefix + 'instance_mappings', uuid)
    return counts


def _all(value: int) -> dict[str, int]:
    return {table: value for table in ('instances', *CHILD_TABLES, 'instance_mappings')}


def test_archive_moves_deleted_servers_and_purge_deletes_them(any_dep):
    dep = any_dep
    live = _server(dep)
    gone = _server(dep, deleted_at=RECENT)

    rc, out = dep.manage('db', 'archive_deleted_rows', '--verbose')

    assert rc == 1, out
    assert '| instances ' in out and '| API_DB.instance_mappings ' in out
    assert _where(dep, gone, shadow=False) == _all(0)
    assert _where(dep, gone, shadow=True) == _all(1)
    assert _where(dep, live, shadow=False) == _all(1)
    assert _where(dep, live, shadow=True) == _all(0)
    for table in ('tags', 'console_auth_tokens', 'request_specs', 'instance_group_member'):
        url = dep.cell_url if table in ('tags', 'console_auth_tokens') else dep.api_url
        assert _count(url, table, gone) == 0, table
        assert _count(url, table, live) == 1, table

    assert dep.manage('db', 'archive_deleted_rows', '--verbose') == (
        0, 'Nothing was archived.\n')

    rc, out = dep.manage('db', 'purge', '--all', '--verbose')
    assert rc == 0, out
    assert 'DB: Deleted 1 rows from shadow_instances' in out
    assert 'API_DB.shadow_instance_mappings' in out
    assert _where(dep, gone, shadow=True) == _all(0)
    assert _where(dep, live, shadow=False) == _all(1)
    assert dep.manage('db', 'purge', '--all')[0] == 3


def test_max_rows_batches_and_until_complete(dep):
    servers = [_server(dep, deleted_at=RECENT) for _ in range(3)]

    rc, out = dep.manage('db', 'archive_deleted_rows', '--max_rows', '1')

    assert rc == 1
    # One server per batch, with everything that depends on it (a soft limit).
    assert [_count(dep.cell_url, 'shadow_instances', uuid) for uuid in servers] == [1, 0, 0]
    assert _where(dep, servers[0], shadow=True) == _all(1)

    rc, out = dep.manage('db', 'archive_deleted_rows', '--max_rows', '1',
                         '--until-complete', '--verbose')

    assert rc == 1
    assert out.startswith('Archiving...') and '.complete' in out
    assert [_count(dep.cell_url, 'shadow_instances', uuid) for uuid in servers] == [1, 1, 1]
    assert dep.manage('db', 'archive_deleted_rows', '--until-complete')[0] == 0


def test_before_archives_and_purges_only_older_rows(dep):
    old = _server(dep, deleted_at=OLD)
    recent = _server(dep, deleted_at=RECENT)

    assert dep.manage('db', 'archive_deleted_rows', '--before', '2021-01-01')[0] == 1

    assert _where(dep, old, shadow=True) == _all(1)
    assert _where(dep, recent, shadow=False) == _all(1)

    # As ``date`` prints it, in another time zone than the database's UTC.
    assert dep.manage('db', 'archive_deleted_rows', '--before',
                      'Thu Nov 26 16:00:00 UTC 2026')[0] == 1
    assert _where(dep, recent, shadow=True) == _all(1)

    assert dep.manage('db', 'purge', '--before', '2021-01-01')[0] == 0
    assert _where(dep, old, shadow=True)['instances'] == 0
    assert _where(dep, old, shadow=True)['instance_mappings'] == 0
    assert _where(dep, recent, shadow=True) == _all(1)


def test_rows_deleted_on_their_own_and_task_log(dep):
    live = _server(dep)
    with engine.get_engine(dep.cell_url).begin() as conn:
        conn.execute(sa.text("UPDATE instance_metadata SET deleted = id, deleted_at = :t"),
                     {'t': RECENT})
        conn.execute(models.TaskLog.__table__.insert().values(
            task_name='audit', state='DONE', host='h', period_beginning=OLD,
            period_ending=OLD, message=''))

    rc, out = dep.manage('db', 'archive_deleted_rows', '--verbose')

    assert rc == 1
    assert _count(dep.cell_url, 'shadow_instance_metadata', live) == 1
    assert _count(dep.cell_url, 'instances', live) == 1
    assert _count(dep.cell_url, 'task_log') == 1

    assert dep.manage('db', 'archive_deleted_rows', '--task-log')[0] == 1
    assert (_count(dep.cell_url, 'task_log'), _count(dep.cell_url, 'shadow_task_log')) == (0, 1)


def test_all_cells_archives_cell0_too_and_purge_after(dep):
    assert dep.manage('cell_v2', 'map_cell0')[0] == 0
    assert dep.manage('db', 'sync')[0] == 0
    in_cell0 = _server(dep, deleted_at=RECENT, url=dep.cell0_url)
    in_cell1 = _server(dep, deleted_at=RECENT)

    rc, out = dep.manage('db', 'archive_deleted_rows', '--all-cells', '--verbose', '--purge')

    assert rc == 1, out
    assert '| cell0.instances ' in out and '| cell1.instances ' in out
    assert 'Rows were archived, running purge...' in out
    assert _count(dep.cell0_url, 'instances', in_cell0) == 0
    assert _count(dep.cell_url, 'instances', in_cell1) == 0
    for url in (dep.cell0_url, dep.cell_url):
        assert _count(url, 'shadow_instances') == 0


@pytest.mark.parametrize('argv, rc, message', [
    (('--max_rows', '0'), 2, 'Must supply a positive value for max_rows'),
    (('--max_rows', '2147483648'), 2, 'max rows must be <= 2147483647'),
    (('--before', 'not a date'), 4, 'Invalid value for --before'),
])
def test_archive_refusals(dep, argv, rc, message):
    deleted = _server(dep, deleted_at=RECENT)
    result = dep.manage('db', 'archive_deleted_rows', *argv)
    assert result[0] == rc and message in result[1]
    assert _count(dep.cell_url, 'instances', deleted) == 1


def test_no_api_database_refusals(dep):
    dep.config_file.write_text(dep.config_file.read_text().replace(
        'connection = %s\n' % dep.api_url, ''))
    rc, out = dep.manage('db', 'archive_deleted_rows')
    assert rc == 3 and 'Failed to connect to API DB' in out
    assert dep.manage('db', 'purge', '--all', '--all-cells')[0] == 4
    # The local purge needs only the cell database.
    assert dep.manage('db', 'purge', '--all')[0] == 3


def test_purge_refusals(dep):
    assert dep.manage('db', 'purge') == (1, 'Either --before or --all is required\n')
    rc, out = dep.manage('db', 'purge', '--before', 'never')
    assert rc == 2 and 'Invalid value for --before' in out


def test_unexpected_error_is_255(dep):
    with engine.get_engine(dep.cell_url).begin() as conn:
        conn.execute(sa.text('DROP TABLE shadow_instances'))
    _server(dep, deleted_at=RECENT)
    rc, out = dep.manage('db', 'archive_deleted_rows')
    assert rc == 255 and 'An error has occurred' in out


def test_online_data_migrations_nothing_pending(dep):
    rc, out = dep.manage('db', 'online_data_migrations')
    assert rc == 0 and 'Running batches of 50 until complete' in out
    assert dep.manage('db', 'online_data_migrations', '--max-count', 'x')[0] == 127


class _Rows:
    """A test double migration: ``left`` rows to migrate, ``fail`` raises."""

    def __init__(self, left: int, fail: bool = False) -> None:
        self.left = left
        self.fail = fail
        self.__name__ = 'migrate_%d' % left

    def __call__(self, context, max_count):
        if self.fail:
            raise ValueError('broken')
        done = min(self.left, max_count)
        found = min(self.left, max_count)
        self.left -= done
        return found, done


def test_online_migrations_run_batches_until_complete(capsys):
    ctxt = nl_context.get_admin_context()
    first, second = _Rows(120), _Rows(30)

    assert online_migrations.run(ctxt, None, [first, second]) == 0

    assert (first.left, second.left) == (0, 0)
    table = capsys.readouterr().out
    assert '| migrate_120 |' in table and '120' in table


def test_online_migrations_max_count_and_failures(capsys):
    ctxt = nl_context.get_admin_context()
    rows = _Rows(10)
    assert online_migrations.run(ctxt, '4', [rows]) == 1
    assert rows.left == 6
    # Another migration did work: the failure may depend on it, not fatal yet.
    assert online_migrations.run(ctxt, '4', [_Rows(0, fail=True), rows]) == 1
    assert online_migrations.run(ctxt, '4', [_Rows(0, fail=True)]) == 2
    assert online_migrations.run(ctxt, None, [_Rows(0, fail=True), _Rows(3)]) == 2
    assert online_migrations.run(ctxt, '0', [rows]) == 127
    assert 'Some migrations failed unexpectedly' in capsys.readouterr().out


def test_an_id_already_in_the_shadow_does_not_stop_the_archive(dep):
    # MySQL before 8 restarts an emptied table's ids after a restart: an archived id
    # comes back. The shadows have no key, so both rows are kept.
    gone = _server(dep, deleted_at=RECENT)
    with engine.get_engine(dep.cell_url).begin() as conn:
        instance_id = conn.scalar(sa.text('SELECT id FROM instances WHERE uuid = :u'),
                                  {'u': gone})
        conn.execute(models.SHADOW_TABLES['instances'].insert().values(
            id=instance_id, uuid='an-older-server', deleted=instance_id))

    assert dep.manage('db', 'archive_deleted_rows')[0] == 1

    assert _count(dep.cell_url, 'shadow_instances') == 2
    assert _count(dep.cell_url, 'shadow_instances', gone) == 1
