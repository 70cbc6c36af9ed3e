"""block_device_mapping.volume_type: the volume type a mapping asked for (API 2.67).

Revision ID: d2e4f6a8b0c1
Revises: b7c1d2e3f4a5
Create Date: 2026-11-26 07:40:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'd2e4f6a8b0c1'
down_revision = 'b7c1d2e3f4a5'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('block_device_mapping') as batch:
        batch.add_column(sa.Column('volume_type', sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('block_device_mapping') as batch:
        batch.drop_column('volume_type')
