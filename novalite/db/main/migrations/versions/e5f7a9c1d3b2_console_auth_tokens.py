"""The console_auth_tokens table: console tokens (hashed) the servers' hosts authorized.

Revision ID: e5f7a9c1d3b2
Revises: d2e4f6a8b0c1
Create Date: 2026-11-26 09:45:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = 'e5f7a9c1d3b2'
down_revision = 'd2e4f6a8b0c1'
branch_labels = None
depends_on = None

TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('console_auth_tokens',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sa.String(length=255), nullable=False),
        sa.Column('console_type', sa.String(length=255), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('port', sa.Integer(), nullable=False),
        sa.Column('tls_port', sa.Integer(), nullable=True),
        sa.Column('internal_access_path', sa.String(length=255), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('expires', sa.Integer(), nullable=False),
        sa.Column('access_url_base', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash', name='uniq_console_auth_tokens0token_hash'),
        **TABLE_KWARGS)
    op.create_index('console_auth_tokens_instance_uuid_idx', 'console_auth_tokens',
                    ['instance_uuid'])
    op.create_index('console_auth_tokens_host_expires_idx', 'console_auth_tokens',
                    ['host', 'expires'])
    op.create_index('console_auth_tokens_token_hash_instance_uuid_idx',
                    'console_auth_tokens', ['token_hash', 'instance_uuid'])


def downgrade() -> None:
    op.drop_table('console_auth_tokens')
