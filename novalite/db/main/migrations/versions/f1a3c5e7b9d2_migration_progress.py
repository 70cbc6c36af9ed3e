"""The migrations table's progress counters of a live migration (memory and disk
bytes: total, processed, remaining), as Nova's.

Revision ID: f1a3c5e7b9d2
Revises: e5f7a9c1d3b2
Create Date: 2026-11-26 13:10:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = 'f1a3c5e7b9d2'
down_revision = 'e5f7a9c1d3b2'
branch_labels = None
depends_on = None

COLUMNS = ('memory_total', 'memory_processed', 'memory_remaining',
           'disk_total', 'disk_processed', 'disk_remaining')


def upgrade() -> None:
    with op.batch_alter_table('migrations') as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('migrations') as batch:
        for name in COLUMNS:
            batch.drop_column(name)
