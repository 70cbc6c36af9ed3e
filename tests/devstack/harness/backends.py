"""The shared servers the stack borrows: databases on MariaDB or PostgreSQL, a RabbitMQ
vhost. Everything made here is named by the caller, so teardown can find it again."""
from __future__ import annotations

import functools
import os
import subprocess

import sqlalchemy as sa
from sqlalchemy.engine import make_url

SERVER_URLS = {
    'mysql': os.environ.get('NOVALITE_DEVSTACK_MYSQL_URL',
                            'mysql+pymysql://root@127.0.0.1:3306'),
    'postgresql': os.environ.get('NOVALITE_DEVSTACK_PGSQL_URL',
                                 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres'),
}
RABBIT_URL = os.environ.get('NOVALITE_DEVSTACK_RABBIT_URL', 'rabbit://guest:guest@127.0.0.1:5672')
RABBIT_USER = 'guest'


def _admin_engine(backend: str) -> sa.Engine:
    # AUTOCOMMIT: PostgreSQL refuses CREATE/DROP DATABASE inside a transaction.
    return sa.create_engine(SERVER_URLS[backend], isolation_level='AUTOCOMMIT',
                            poolclass=sa.pool.NullPool)


def database_url(backend: str, name: str) -> str:
    url = make_url(SERVER_URLS[backend]).set(database=name)
    if backend == 'mysql':
        url = url.update_query_dict({'charset': 'utf8mb4'})
        if not _mysql_has_tls():
            # PyMySQL (1.2 on) builds a TLS context for every connection, loading the
            # system's CA certificates (25 ms of CPU), to try TLS on a server that may
            # offer it; a server without TLS need not cost each connection that.
            url = url.update_query_dict({'ssl_disabled': 'true'})
    return url.render_as_string(hide_password=False)


@functools.cache
def _mysql_has_tls() -> bool:
    engine = _admin_engine('mysql')
    try:
        with engine.connect() as conn:
            row = conn.exec_driver_sql("SHOW VARIABLES LIKE 'have_ssl'").first()
    finally:
        engine.dispose()
    return row is not None and row[1] == 'YES'


def create_database(backend: str, name: str) -> str:
    """An empty database ``name``; returns its SQLAlchemy URL."""
    engine = _admin_engine(backend)
    try:
        with engine.connect() as conn:
            if backend == 'mysql':
                conn.exec_driver_sql('CREATE DATABASE `%s` CHARACTER SET utf8mb4' % name)
            else:
                conn.exec_driver_sql('CREATE DATABASE "%s" ENCODING \'UTF8\'' % name)
    finally:
        engine.dispose()
    return database_url(backend, name)


def drop_database(backend: str, name: str) -> None:
    engine = _admin_engine(backend)
    try:
        with engine.connect() as conn:
            if backend == 'mysql':
                conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % name)
            else:
                # FORCE: a daemon killed mid-transaction must not keep the database alive.
                conn.exec_driver_sql('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
    finally:
        engine.dispose()


def list_databases(backend: str, prefix: str) -> list[str]:
    engine = _admin_engine(backend)
    try:
        with engine.connect() as conn:
            if backend == 'mysql':
                rows = conn.exec_driver_sql('SHOW DATABASES').scalars()
            else:
                rows = conn.exec_driver_sql('SELECT datname FROM pg_database').scalars()
            return sorted(r for r in rows if r.startswith(prefix))
    finally:
        engine.dispose()


def rabbitmqctl(*args: str, check: bool = True) -> str:
    result = subprocess.run(['rabbitmqctl', *args], capture_output=True, text=True,
                            timeout=60)
    if check and result.returncode != 0:
        raise RuntimeError('rabbitmqctl %s failed (%s): %s'
                           % (' '.join(args), result.returncode, result.stderr.strip()))
    return result.stdout


def transport_url(vhost: str) -> str:
    return '%s/%s' % (RABBIT_URL, vhost)


def create_vhost(vhost: str) -> str:
    """A vhost the guest user may use fully; returns its transport URL."""
    rabbitmqctl('add_vhost', vhost)
    rabbitmqctl('set_permissions', '-p', vhost, RABBIT_USER, '.*', '.*', '.*')
    return transport_url(vhost)


def delete_vhost(vhost: str) -> None:
    if vhost in list_vhosts(vhost):
        rabbitmqctl('delete_vhost', vhost)


def list_vhosts(prefix: str) -> list[str]:
    out = rabbitmqctl('list_vhosts', '-q', '--no-table-headers', 'name')
    return sorted(v.strip() for v in out.splitlines() if v.strip().startswith(prefix))


def close_connections(vhost: str, reason: str = 'closed by the devstack harness') -> None:
    """Drop every client connection of ``vhost``, as a broker restart would."""
    rabbitmqctl('close_all_connections', '-p', vhost, reason)


def connection_count(vhost: str) -> int:
    out = rabbitmqctl('list_connections', '-p', vhost, '-q', '--no-table-headers', 'name')
    return len([line for line in out.splitlines() if line.strip()])
