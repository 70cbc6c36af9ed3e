"""The shadow_instance_mappings table: the mappings of the instances ``novalite-manage db
archive_deleted_rows`` archived, with the instance's deleted_at, until ``db purge``.

Revision ID: b4d6f8a0c2e4
Revises: c3d4e5f6a7b8
Create Date: 2026-11-26 16:30:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'b4d6f8a0c2e4'
down_revision = 'c3d4e5f6a7b8'
branch_labels = None
depends_on = None

TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('shadow_instance_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('cell_id', sa.Integer(), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('queued_for_delete', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        **TABLE_KWARGS)
    op.create_index('shadow_instance_mappings_instance_uuid_idx',
                    'shadow_instance_mappings', ['instance_uuid'])


def downgrade() -> None:
    op.drop_table('shadow_instance_mappings')
