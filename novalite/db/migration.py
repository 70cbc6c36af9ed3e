"""Schema migrations of the API and cell databases: alembic, configured in code."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime import migration as alembic_migration
from alembic.script import ScriptDirectory

from novalite.conf import CONF
from novalite.db import engine

if TYPE_CHECKING:
    from sqlalchemy import MetaData
    from sqlalchemy.engine import Connection

DATABASES = ('api', 'main')
_HERE = os.path.dirname(os.path.abspath(__file__))


def _url(database: str, url: str | None) -> str:
    if database not in DATABASES:
        raise ValueError('database must be one of %s, not %r' % (DATABASES, database))
    if url:
        return url
    url = CONF.api_database.connection if database == 'api' else CONF.database.connection
    if not url:
        group = 'api_database' if database == 'api' else 'database'
        raise RuntimeError('[%s] connection is not set' % group)
    return url


def _config(database: str) -> Config:
    """An alembic Config needing no alembic.ini, so an installed package can migrate."""
    config = Config()
    location = os.path.join(_HERE, database, 'migrations')
    # The value goes through ConfigParser interpolation.
    config.set_main_option('script_location', location.replace('%', '%%'))
    return config


def db_sync(database: str, version: str | None = None, url: str | None = None) -> None:
    """Upgrade (or downgrade) the ``'api'`` or ``'main'`` schema to ``version`` (head).

    :param database: ``'api'`` for the API database, ``'main'`` for a cell database.
    :param version: an alembic revision; ``None`` means the latest one.
    :param url: the database; by default ``[api_database]`` or ``[database] connection``.
    """
    config = _config(database)
    target = version or 'head'
    with engine.get_engine(_url(database, url)).begin() as connection:
        config.attributes['connection'] = connection
        current = _current(connection)
        script = ScriptDirectory.from_config(config)
        if current is not None and (target == 'base' or _is_older(script, target, current)):
            command.downgrade(config, target)
        else:
            command.upgrade(config, target)


def _current(connection: Connection) -> str | None:
    return alembic_migration.MigrationContext.configure(connection).get_current_revision()


def _is_older(script: ScriptDirectory, target: str, current: str) -> bool:
    """Whether ``target`` is an ancestor of ``current`` (so syncing to it goes down)."""
    if target == 'head':
        return False
    target_rev = script.get_revision(target)
    if target_rev is None or target_rev.revision == current:
        return False
    return any(rev.revision == target_rev.revision
               for rev in script.iterate_revisions(current, 'base'))


def db_version(database: str, url: str | None = None) -> str | None:
    """The revision the database is at; ``None`` when it was never migrated."""
    with engine.get_engine(_url(database, url)).connect() as connection:
        return _current(connection)


def head(database: str) -> str | None:
    """The latest revision shipped for the ``'api'`` or ``'main'`` schema."""
    return ScriptDirectory.from_config(_config(database)).get_current_head()


def run_env(target_metadata: MetaData) -> None:
    """The body of both alembic ``env.py`` files: migrate on the connection db_sync
    handed over (alembic's own command line and offline SQL are not supported)."""
    from alembic import context
    if context.is_offline_mode():
        raise RuntimeError('offline (--sql) migrations are not supported')
    connection = context.config.attributes.get('connection')
    if connection is None:
        raise RuntimeError('use novalite.db.migration (novalite-manage), which passes the '
                           'connection to alembic')
    # render_as_batch: SQLite can only ALTER tables by copying them.
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()
