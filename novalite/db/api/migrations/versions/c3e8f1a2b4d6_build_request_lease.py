"""Build requests carry who is building them: the attempt, when a conductor took it,
and whether its user asked to delete it meanwhile (see conductor/tasks/redrive.py).

Revision ID: c3e8f1a2b4d6
Revises: a1b2c3d4e5f6
Create Date: 2026-11-26 00:50:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'c3e8f1a2b4d6'
down_revision = 'a1b2c3d4e5f6'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.add_column(sa.Column('attempt', sa.Integer(), nullable=False,
                                   server_default='0'))
        batch.add_column(sa.Column('taken_at', sa.DateTime(), nullable=True))
        batch.add_column(sa.Column('delete_requested', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.drop_column('delete_requested')
        batch.drop_column('taken_at')
        batch.drop_column('attempt')
