"""The quota_locks table: a row per project that creates lock to count and insert alone.

Revision ID: c3d4e5f6a7b8
Revises: c3e8f1a2b4d6
Create Date: 2026-11-26 00:40:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'c3d4e5f6a7b8'
down_revision = 'c3e8f1a2b4d6'
branch_labels = None
depends_on = None

TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('quota_locks',
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('project_id'),
        **TABLE_KWARGS)


def downgrade() -> None:
    op.drop_table('quota_locks')
