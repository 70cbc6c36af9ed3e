"""The task_log table: runs of the compute's periodic instance usage audit.

Revision ID: b7c1d2e3f4a5
Revises: 6f5e4d3c2b1a
Create Date: 2026-11-25 21:20:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'b7c1d2e3f4a5'
down_revision = '6f5e4d3c2b1a'
branch_labels = None
depends_on = None

TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('task_log',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('task_name', sa.String(length=255), nullable=False),
        sa.Column('state', sa.String(length=255), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('period_beginning', sa.DateTime(), nullable=False),
        sa.Column('period_ending', sa.DateTime(), nullable=False),
        sa.Column('message', sa.String(length=255), nullable=False),
        sa.Column('task_items', sa.Integer(), nullable=True),
        sa.Column('errors', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('task_name', 'host', 'period_beginning', 'period_ending',
                            name='uniq_task_log0task_name0host0period_beginning0period_ending'),
        **TABLE_KWARGS)
    op.create_index('ix_task_log_period_beginning', 'task_log', ['period_beginning'])
    op.create_index('ix_task_log_host', 'task_log', ['host'])
    op.create_index('ix_task_log_period_ending', 'task_log', ['period_ending'])


def downgrade() -> None:
    op.drop_table('task_log')
