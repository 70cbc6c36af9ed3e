"""Initial schema of the API database.

Revision ID: a1b2c3d4e5f6
Revises:
Create Date: 2026-11-21 23:15:34.969983
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'a1b2c3d4e5f6'
down_revision = None
branch_labels = None
depends_on = None

# MySQL's TEXT stops at 64 KiB: serialized objects may need more.
MediumText = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')
TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('aggregates',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('name', name='uniq_aggregate0name'),
        **TABLE_KWARGS)
    op.create_index('ix_aggregates_uuid', 'aggregates', ['uuid'], unique=False)
    op.create_table('build_requests',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('instance', MediumText, nullable=True),
        sa.Column('block_device_mappings', MediumText, nullable=True),
        sa.Column('tags', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid', name='uniq_build_requests0instance_uuid'),
        **TABLE_KWARGS)
    op.create_index('build_requests_project_id_idx', 'build_requests', ['project_id'], unique=False)
    op.create_table('cell_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('transport_url', sa.Text(), nullable=False),
        sa.Column('database_connection', sa.Text(), nullable=False),
        sa.Column('disabled', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'),
        **TABLE_KWARGS)
    op.create_table('flavors',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('root_gb', sa.Integer(), nullable=True),
        sa.Column('ephemeral_gb', sa.Integer(), nullable=True),
        sa.Column('swap', sa.Integer(), nullable=False),
        sa.Column('vcpu_weight', sa.Integer(), nullable=True),
        sa.Column('flavorid', sa.String(length=255), nullable=False),
        sa.Column('rxtx_factor', sa.Float(), nullable=True),
        sa.Column('disabled', sa.Boolean(), nullable=False),
        sa.Column('is_public', sa.Boolean(), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
        sa.UniqueConstraint('name', name='uniq_flavors0name'),
        **TABLE_KWARGS)
    op.create_table('instance_groups',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_instance_groups0uuid'),
        **TABLE_KWARGS)
    op.create_table('key_pairs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=False),
        sa.Column('fingerprint', sa.String(length=255), nullable=True),
        sa.Column('public_key', sa.Text(), nullable=True),
        sa.Column('type', sa.Enum('ssh', 'x509', name='keypair_types'), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('user_id', 'name', name='uniq_key_pairs0user_id0name'),
        **TABLE_KWARGS)
    op.create_table('project_user_quotas',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('resource', sa.String(length=255), nullable=False),
        sa.Column('hard_limit', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('user_id', 'project_id', 'resource', name='uniq_project_user_quotas0user_id0project_id0resource'),
        **TABLE_KWARGS)
    op.create_table('quota_classes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('class_name', sa.String(length=255), nullable=True),
        sa.Column('resource', sa.String(length=255), nullable=True),
        sa.Column('hard_limit', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('ix_quota_classes_class_name', 'quota_classes', ['class_name'], unique=False)
    op.create_table('quotas',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('resource', sa.String(length=255), nullable=False),
        sa.Column('hard_limit', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('project_id', 'resource', name='uniq_quotas0project_id0resource'),
        **TABLE_KWARGS)
    op.create_table('request_specs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('spec', MediumText, nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid', name='uniq_request_specs0instance_uuid'),
        **TABLE_KWARGS)
    op.create_table('aggregate_hosts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('aggregate_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['aggregate_id'], ['aggregates.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', 'aggregate_id', name='uniq_aggregate_hosts0host0aggregate_id'),
        **TABLE_KWARGS)
    op.create_table('aggregate_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('aggregate_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['aggregate_id'], ['aggregates.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('aggregate_id', 'key', name='uniq_aggregate_metadata0aggregate_id0key'),
        **TABLE_KWARGS)
    op.create_table('flavor_extra_specs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.Column('flavor_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['flavor_id'], ['flavors.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('flavor_id', 'key', name='uniq_flavor_extra_specs0flavor_id0key'),
        **TABLE_KWARGS)
    op.create_index('flavor_extra_specs_flavor_id_key_idx', 'flavor_extra_specs', ['flavor_id', 'key'], unique=False)
    op.create_table('flavor_projects',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('flavor_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['flavor_id'], ['flavors.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('flavor_id', 'project_id', name='uniq_flavor_projects0flavor_id0project_id'),
        **TABLE_KWARGS)
    op.create_table('host_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('cell_id', sa.Integer(), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['cell_id'], ['cell_mappings.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', name='uniq_host_mappings0host'),
        **TABLE_KWARGS)
    op.create_table('instance_group_member',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=255), nullable=True),
        sa.Column('group_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['group_id'], ['instance_groups.id'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_table('instance_group_policy',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('policy', sa.String(length=255), nullable=True),
        sa.Column('rules', sa.Text(), nullable=True),
        sa.Column('group_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['group_id'], ['instance_groups.id'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_table('instance_mappings',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('cell_id', sa.Integer(), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('queued_for_delete', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['cell_id'], ['cell_mappings.id'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid', name='uniq_instance_mappings0instance_uuid'),
        **TABLE_KWARGS)
    op.create_index('instance_mappings_project_id_idx', 'instance_mappings', ['project_id'], unique=False)
    op.create_index('instance_mappings_user_id_project_id_idx', 'instance_mappings', ['user_id', 'project_id'], unique=False)


def downgrade() -> None:
    # Dropping a table drops its indexes.
    op.drop_table('instance_mappings')
    op.drop_table('instance_group_policy')
    op.drop_table('instance_group_member')
    op.drop_table('host_mappings')
    op.drop_table('flavor_projects')
    op.drop_table('flavor_extra_specs')
    op.drop_table('aggregate_metadata')
    op.drop_table('aggregate_hosts')
    op.drop_table('request_specs')
    op.drop_table('quotas')
    op.drop_table('quota_classes')
    op.drop_table('project_user_quotas')
    op.drop_table('key_pairs')
    op.drop_table('instance_groups')
    op.drop_table('flavors')
    op.drop_table('cell_mappings')
    op.drop_table('build_requests')
    op.drop_table('aggregates')
    # PostgreSQL keeps an ENUM as a type of its own.
    sa.Enum(name='keypair_types').drop(op.get_bind(), checkfirst=True)
