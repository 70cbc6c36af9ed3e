"""Shadow tables: a shadow_<table> for each table with a ``deleted`` column, where
``novalite-manage db archive_deleted_rows`` moves soft-deleted rows.

Each copies its table's columns as they are at this revision (types, nullability), with
no key, index or constraint, as the models' SHADOW_TABLES declare them.

Revision ID: a8b9c0d1e2f3
Revises: f1a3c5e7b9d2
Create Date: 2026-11-26 16:30:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = 'a8b9c0d1e2f3'
down_revision = 'f1a3c5e7b9d2'
branch_labels = None
depends_on = None

TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}
TABLES = ('instances', 'instance_extra', 'instance_info_caches', 'instance_metadata',
          'instance_system_metadata', 'instance_faults', 'instance_actions',
          'instance_actions_events', 'block_device_mapping', 'services', 'compute_nodes',
          'migrations', 'task_log')


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for name in TABLES:
        # No server default is copied: PostgreSQL's id default names the table's sequence.
        columns = [sa.Column(column['name'], column['type'], nullable=column['nullable'])
                   for column in inspector.get_columns(name)]
        op.create_table('shadow_' + name, *columns, **TABLE_KWARGS)


def downgrade() -> None:
    for name in TABLES:
        op.drop_table('shadow_' + name)
