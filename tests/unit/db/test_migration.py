"""The alembic migrations build exactly the models' schema on SQLite, MariaDB and PostgreSQL."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from novalite.conf import CONF
from novalite.db import engine, migration
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models
from tests.fixtures import databases

METADATA = {'api': api_models.Base.metadata, 'main': main_models.Base.metadata}


@pytest.fixture(params=databases.BACKENDS)
def new_db(request, tmp_path):
    yield from databases.database_factory(request.param, tmp_path)


def _tables(url: str) -> set[str]:
    return set(sa.inspect(engine.get_engine(url)).get_table_names())


def _diff(url: str, database: str) -> list:
    with engine.get_engine(url).connect() as conn:
        return compare_metadata(MigrationContext.configure(conn), METADATA[database])


@pytest.mark.parametrize('database', migration.DATABASES)
def test_upgrade_empty_database_to_head_matches_models(new_db, database):
    url = new_db(database)
    assert migration.db_version(database, url=url) is None

    migration.db_sync(database, url=url)

    assert migration.db_version(database, url=url) == migration.head(database)
    assert _tables(url) == set(METADATA[database].tables) | {'alembic_version'}
    assert _diff(url, database) == []


@pytest.mark.parametrize('database', migration.DATABASES)
def test_sync_twice_is_a_no_op_and_downgrade_to_base_empties(new_db, database):
    url = new_db(database)
    migration.db_sync(database, url=url)
    migration.db_sync(database, url=url)
    assert migration.db_version(database, url=url) == migration.head(database)

    migration.db_sync(database, version='base', url=url)

    assert migration.db_version(database, url=url) is None
    assert _tables(url) <= {'alembic_version'}
    # And back up again: the downgrade left nothing behind (e.g. PostgreSQL's ENUM type).
    migration.db_sync(database, url=url)
    assert _diff(url, database) == []


@pytest.fixture
def mysql_db(tmp_path):
    yield from databases.database_factory('mysql', tmp_path)


_MEDIUMTEXT_COLUMN = {'api': ('request_specs', 'spec'), 'main': ('instances', 'user_data')}


@pytest.mark.parametrize('database', migration.DATABASES)
def test_mysql_tables_are_innodb_utf8mb4(mysql_db, database):
    url = mysql_db(database)
    migration.db_sync(database, url=url)
    with engine.get_engine(url).connect() as conn:
        rows = conn.execute(sa.text(
            'SELECT table_name, engine, table_collation FROM information_schema.tables'
            ' WHERE table_schema = DATABASE()')).all()
        table, column = _MEDIUMTEXT_COLUMN[database]
        column_type = conn.execute(sa.text(
            'SELECT data_type FROM information_schema.columns WHERE table_schema = DATABASE()'
            ' AND table_name = :t AND column_name = :c'), {'t': table, 'c': column}).scalar()
    assert len(rows) == len(METADATA[database].tables) + 1
    for name, table_engine, collation in rows:
        assert table_engine == 'InnoDB', name
        assert collation.startswith('utf8mb4'), (name, collation)
    assert column_type == 'mediumtext'


def test_sync_defaults_to_configured_connections(tmp_path):
    api_url = 'sqlite:///%s' % (tmp_path / 'api.sqlite')
    cell_url = 'sqlite:///%s' % (tmp_path / 'cell.sqlite')
    CONF.set_override('connection', api_url, group='api_database')
    CONF.set_override('connection', cell_url, group='database')
    try:
        migration.db_sync('api')
        migration.db_sync('main')
        assert migration.db_version('api') == migration.head('api')
        assert migration.db_version('main') == migration.head('main')
        assert 'cell_mappings' in _tables(api_url) and 'instances' not in _tables(api_url)
        assert 'instances' in _tables(cell_url) and 'cell_mappings' not in _tables(cell_url)
    finally:
        CONF.clear_override('connection', group='api_database')
        CONF.clear_override('connection', group='database')
        engine.dispose_all()


def test_unknown_database_and_missing_connection_are_refused():
    with pytest.raises(ValueError):
        migration.db_sync('cell0', url='sqlite://')
    with pytest.raises(RuntimeError, match=r'\[api_database\] connection'):
        migration.db_version('api')


@pytest.mark.parametrize('backend', ['mysql', 'postgresql'])
def test_factory_drops_its_databases(backend, tmp_path):
    factory = databases.DatabaseFactory(backend, str(tmp_path))
    try:
        url = factory('leak')
        name = sa.engine.make_url(url).database
        migration.db_sync('main', url=url)
        assert name in databases.leftover_databases(backend)
    finally:
        factory.cleanup()
    assert name not in databases.leftover_databases(backend)


def test_compare_finds_a_schema_that_drifted(new_db):
    # The comparison above must be able to fail: a missing index and an extra column show.
    url = new_db('main')
    migration.db_sync('main', url=url)
    with engine.get_engine(url).begin() as conn:
        conn.execute(sa.text('DROP INDEX instances_reservation_id_idx'
                             + (' ON instances' if conn.dialect.name == 'mysql' else '')))
        conn.execute(sa.text('ALTER TABLE services ADD COLUMN extra INTEGER'))
    kinds = sorted(change[0] for change in _diff(url, 'main'))
    assert kinds == ['add_index', 'remove_column']


@pytest.mark.parametrize('backend', ['mysql', 'postgresql'])
def test_unreachable_server_fails_under_ci_and_skips_otherwise(backend, tmp_path, monkeypatch):
    monkeypatch.setitem(databases.SERVER_URLS, backend,
                        databases.SERVER_URLS[backend].replace(
                            ':3306' if backend == 'mysql' else ':5432', ':1'))
    factory = databases.DatabaseFactory(backend, str(tmp_path))
    monkeypatch.setenv('CI', '1')
    with pytest.raises(pytest.fail.Exception, match='unreachable'):
        factory('x')
    monkeypatch.delenv('CI')
    with pytest.raises(pytest.skip.Exception, match='unreachable'):
        factory('x')
