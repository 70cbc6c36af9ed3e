"""Engines and sessions, one engine per database URL, shared by the whole process.

The API database is ``[api_database] connection``. A cell database is the URL a
context was targeted at (``context.db_connection``, see ``novalite.context.target_cell``)
or, for services that live in one cell (compute's conductor), ``[database] connection``.
"""
from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from novalite.conf import CONF

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy import Connection, Engine
    from sqlalchemy.engine.interfaces import DBAPICursor, ExecutionContext
    from sqlalchemy.orm import Session
    from sqlalchemy.pool import ConnectionPoolEntry

    from novalite.context import RequestContext

    # One statement's parameters, or one row's of an executemany.
    Parameters: TypeAlias = Mapping[str, Any] | Sequence[Any]

# oslo.db and SQLAlchemy are imported by the first engine: a compute process, which
# reaches its database through the conductor, never loads them (see novalite.db.lazy).

_ENGINES: dict[tuple[str, bool], Engine] = {}
_LOCK = threading.Lock()


def _sqlite_transactions(engine: Engine, writer: bool) -> None:
    """Make SQLite safe for many threads: WAL so that readers never block the writer,
    and writers that take the write lock when they begin. A deferred transaction that
    reads and then writes fails at once with "database is locked" when another writer
    is waiting; ``BEGIN IMMEDIATE`` waits for the lock (up to busy_timeout) instead.

    oslo.db already turns pysqlite's implicit BEGIN off and emits a deferred BEGIN of its
    own; that listener is replaced by one that knows readers from writers. oslo.db has
    no option to leave it out and SQLAlchemy none to run ours first (``insert=True`` is
    ignored for connection events), so it is found by its name, a library internal
    pinned by tests/unit/test_library_pins.py; should it change, the check below stops
    the engine from being used with two BEGINs.
    """
    from sqlalchemy import event
    for listener in list(engine.dispatch.begin):
        if getattr(listener, '__name__', '') == '_sqlite_emit_begin':
            event.remove(engine, 'begin', listener)

    @event.listens_for(engine, 'connect')
    def _connect(dbapi_connection: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute('PRAGMA busy_timeout = 30000')
        if engine.url.database not in (None, '', ':memory:'):
            cursor.execute('PRAGMA journal_mode = WAL')
        cursor.close()

    @event.listens_for(engine, 'begin')
    def _begin(connection: Connection) -> None:
        if 'in_transaction' not in connection.info:
            connection.exec_driver_sql('BEGIN IMMEDIATE' if writer else 'BEGIN')
            connection.info['in_transaction'] = True

    @event.listens_for(engine, 'commit')
    @event.listens_for(engine, 'rollback')
    def _end(connection: Connection) -> None:
        connection.info.pop('in_transaction', None)

    if list(engine.dispatch.begin) != [_begin]:
        raise RuntimeError('oslo.db begins SQLite transactions in a way novalite does not '
                           'know: see tests/unit/test_library_pins.py')


_INT64 = range(-2 ** 63, 2 ** 63)


def _widened(value: object) -> object:
    if type(value) is int and value not in _INT64:
        return math.inf if value > 0 else -math.inf
    return value


def _widened_set(params: Parameters) -> Parameters:
    if isinstance(params, Mapping):
        return {k: _widened(v) for k, v in params.items()}
    return tuple(_widened(v) for v in params)


def _sqlite_wide_integers(engine: Engine) -> None:
    """Bind integers past 64 bits as infinities on SQLite, which refuses them
    (OverflowError) where MariaDB and PostgreSQL compare them with the column: ``GET
    /os-aggregates/9223372036854775808`` or ``/flavors?minRam=<30 digits>`` must find
    nothing, not fail. Every 64-bit column value is below such an integer (or above a
    negative one) and none equals it: so with an infinity, which SQLite compares with
    integers exactly, every comparison answers as it would with the integer itself.

    Only a statement the driver refused is sent again: sqlite3 checks the parameters
    before it runs anything, and the others pay nothing.
    """
    from sqlalchemy import event

    @event.listens_for(engine, 'do_execute')
    def _execute(cursor: DBAPICursor, statement: str, parameters: Parameters,
                 context: ExecutionContext) -> bool:
        try:
            cursor.execute(statement, parameters)
        except OverflowError:
            cursor.execute(statement, _widened_set(parameters))
        return True

    @event.listens_for(engine, 'do_executemany')
    def _executemany(cursor: DBAPICursor, statement: str,
                     parameters: Sequence[Sequence[Any]] | Sequence[Mapping[str, Any]],
                     context: ExecutionContext) -> bool:
        try:
            cursor.executemany(statement, parameters)
        except OverflowError:
            # Each row widened keeps its shape: all mappings or all sequences still.
            cursor.executemany(statement, cast('Sequence[Sequence[Any]]',
                                               [_widened_set(p) for p in parameters]))
        return True


_POOL_OPTIONS = ('max_pool_size', 'max_overflow', 'pool_timeout', 'connection_recycle_time')


def pool_options(url: str) -> dict[str, int | None]:
    """The connection pool settings of the database at ``url``: ``[api_database]``'s for
    the API database, each one unset there falling back to ``[database]``'s; and
    ``[database]``'s for the cell databases. See docs/deployment.md, "Database
    connections", for how they add up across workers."""
    own = CONF.api_database if url == CONF.api_database.connection else None
    return {name: (own[name] if own is not None and own[name] is not None
                   else CONF.database[name]) for name in _POOL_OPTIONS}


def get_engine(url: str, writer: bool = True) -> Engine:
    """The engine for ``url``, created on first use. SQLite gets one engine for
    writers and one for readers (see ``_sqlite_transactions``); other databases one."""
    sqlite = url.startswith('sqlite')
    key = (url, writer or not sqlite)
    engine = _ENGINES.get(key)
    if engine is not None:
        return engine
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            from oslo_db.sqlalchemy import engines
            engine = engines.create_engine(
                url, sqlite_fk=True, mysql_sql_mode='TRADITIONAL', **pool_options(url),
                max_retries=CONF.database.max_retries,
                retry_interval=CONF.database.retry_interval,
                sqlite_synchronous=CONF.database.sqlite_synchronous)
            if sqlite:
                _sqlite_transactions(engine, key[1])
                _sqlite_wide_integers(engine)
                # oslo.db opened a test connection before these listeners existed.
                engine.dispose()
            _ENGINES[key] = engine
    return engine


def dispose_all() -> None:
    """Close every pooled connection (tests, and children after a fork)."""
    with _LOCK:
        for engine in _ENGINES.values():
            engine.dispose()
        _ENGINES.clear()


def api_url() -> str:
    url = CONF.api_database.connection
    if not url:
        raise RuntimeError('[api_database] connection is not set')
    return url


def cell_url(context: RequestContext | None = None) -> str:
    url = getattr(context, 'db_connection', None) or CONF.database.connection
    if not url:
        raise RuntimeError('[database] connection is not set and the context is not '
                           'targeted at a cell')
    return url


# Sessions of the transactions a thread has opened with ``cell_transaction``, by URL.
_JOINED = threading.local()


@contextlib.contextmanager
def _session(url: str, write: bool) -> Iterator[Session]:
    from novalite.objects import base as obj_base
    if obj_base.process_indirection_api() is not None:
        # A compute-only process: its database is the conductor, never a connection.
        from novalite import exception
        raise exception.DBNotAllowed(binary='novalite-compute')
    joined = getattr(_JOINED, 'sessions', {}).get(url)
    if joined is not None:
        yield joined
        return
    from sqlalchemy.orm import Session
    session = Session(get_engine(url, writer=write), expire_on_commit=False,
                      autoflush=False)
    try:
        if write:
            with session.begin():
                yield session
        else:
            yield session
    finally:
        session.close()


def api_writer() -> contextlib.AbstractContextManager[Session]:
    """A session on the API database whose work commits as one transaction."""
    return _session(api_url(), True)


def api_reader() -> contextlib.AbstractContextManager[Session]:
    return _session(api_url(), False)


def cell_writer(context: RequestContext | None = None
               ) -> contextlib.AbstractContextManager[Session]:
    """A transaction on the cell database the context is targeted at."""
    return _session(cell_url(context), True)


def cell_reader(context: RequestContext | None = None
               ) -> contextlib.AbstractContextManager[Session]:
    return _session(cell_url(context), False)


@contextlib.contextmanager
def _connection(url: str) -> Iterator[Connection]:
    """A Core connection for reads, without an ORM session: a status poll's reads cost
    half as much this way (no session to set up, one ROLLBACK at the end instead of the
    session's and the pool's). Inside ``cell_transaction``/``api_transaction`` it is
    that transaction's connection, so the reads see its writes."""
    from novalite.objects import base as obj_base
    if obj_base.process_indirection_api() is not None:
        from novalite import exception
        raise exception.DBNotAllowed(binary='novalite-compute')
    joined = getattr(_JOINED, 'sessions', {}).get(url)
    if joined is not None:
        yield joined.connection()
        return
    with get_engine(url, writer=False).connect() as connection:
        yield connection


def api_connection() -> contextlib.AbstractContextManager[Connection]:
    """A Core connection to read the API database (see ``_connection``)."""
    return _connection(api_url())


def cell_connection(context: RequestContext | None = None
                   ) -> contextlib.AbstractContextManager[Connection]:
    """A Core connection to read the context's cell database (see ``_connection``)."""
    return _connection(cell_url(context))


def cell_transaction(context: RequestContext | None = None
                    ) -> contextlib.AbstractContextManager[Session]:
    """One transaction for every read and write of this thread on the context's cell
    inside the block: object methods join it instead of committing one by one."""
    return _joined_transaction(cell_url(context))


def api_transaction() -> contextlib.AbstractContextManager[Session]:
    """``cell_transaction`` for the API database."""
    return _joined_transaction(api_url())


@contextlib.contextmanager
def _joined_transaction(url: str) -> Iterator[Session]:
    sessions = _JOINED.__dict__.setdefault('sessions', {})
    if url in sessions:
        yield sessions[url]
        return
    with _session(url, True) as session:
        sessions[url] = session
        try:
            yield session
        finally:
            del sessions[url]
