"""Alembic environment of the cell database: runs on the connection db_sync hands over."""
from __future__ import annotations

from alembic import context

from novalite.db.main import models

target_metadata = models.Base.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get('connection')
    if connection is None:
        raise RuntimeError('use novalite.db.migration (novalite-manage), which passes the '
                           'connection to alembic')
    # render_as_batch: SQLite can only ALTER tables by copying them.
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError('offline (--sql) migrations are not supported')
run_migrations_online()
