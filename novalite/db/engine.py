"""Engines and sessions, one engine per database URL, shared by the whole process.

The API database is ``[api_database] connection``. A cell database is the URL a
context was targeted at (``context.db_connection``, see ``novalite.context.target_cell``)
or, for services that live in one cell (compute's conductor), ``[database] connection``.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from oslo_db.sqlalchemy import engines
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from novalite.conf import CONF

_ENGINES: dict[str, Engine] = {}
_LOCK = threading.Lock()


def get_engine(url: str) -> Engine:
    """The engine for ``url``, created on first use."""
    engine = _ENGINES.get(url)
    if engine is not None:
        return engine
    with _LOCK:
        engine = _ENGINES.get(url)
        if engine is None:
            kwargs = {}
            if url.startswith('sqlite'):
                # Threads of one process share a SQLite file: wait for its lock.
                kwargs['connection_parameters'] = 'timeout=30'
            engine = engines.create_engine(
                url, sqlite_fk=True, mysql_sql_mode='TRADITIONAL',
                connection_recycle_time=CONF.database.connection_recycle_time,
                max_pool_size=CONF.database.max_pool_size,
                max_overflow=CONF.database.max_overflow,
                pool_timeout=CONF.database.pool_timeout,
                max_retries=CONF.database.max_retries,
                retry_interval=CONF.database.retry_interval,
                sqlite_synchronous=CONF.database.sqlite_synchronous,
                **kwargs)
            _ENGINES[url] = engine
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


def cell_url(context=None) -> str:
    url = getattr(context, 'db_connection', None) or CONF.database.connection
    if not url:
        raise RuntimeError('[database] connection is not set and the context is not '
                           'targeted at a cell')
    return url


@contextlib.contextmanager
def _session(url: str, write: bool) -> Iterator[Session]:
    session = Session(get_engine(url), expire_on_commit=False, autoflush=False)
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


def cell_writer(context=None) -> contextlib.AbstractContextManager[Session]:
    """A transaction on the cell database the context is targeted at."""
    return _session(cell_url(context), True)


def cell_reader(context=None) -> contextlib.AbstractContextManager[Session]:
    return _session(cell_url(context), False)
