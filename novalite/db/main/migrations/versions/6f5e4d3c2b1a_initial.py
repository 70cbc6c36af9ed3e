"""Initial schema of a cell database.

Revision ID: 6f5e4d3c2b1a
Revises:
Create Date: 2026-11-21 23:15:35.937278
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '6f5e4d3c2b1a'
down_revision = None
branch_labels = None
depends_on = None

# MySQL's TEXT stops at 64 KiB: serialized objects may need more.
MediumText = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')
TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def upgrade() -> None:
    op.create_table('compute_nodes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('service_id', sa.Integer(), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('local_gb', sa.Integer(), nullable=False),
        sa.Column('vcpus_used', sa.Integer(), nullable=False),
        sa.Column('memory_mb_used', sa.Integer(), nullable=False),
        sa.Column('local_gb_used', sa.Integer(), nullable=False),
        sa.Column('hypervisor_type', MediumText, nullable=False),
        sa.Column('hypervisor_version', sa.Integer(), nullable=False),
        sa.Column('hypervisor_hostname', sa.String(length=255), nullable=True),
        sa.Column('cpu_info', MediumText, nullable=False),
        sa.Column('free_ram_mb', sa.Integer(), nullable=True),
        sa.Column('free_disk_gb', sa.Integer(), nullable=True),
        sa.Column('current_workload', sa.Integer(), nullable=True),
        sa.Column('running_vms', sa.Integer(), nullable=True),
        sa.Column('disk_available_least', sa.Integer(), nullable=True),
        sa.Column('host_ip', sa.String(length=39), nullable=True),
        sa.Column('supported_instances', sa.Text(), nullable=True),
        sa.Column('stats', sa.Text(), nullable=True),
        sa.Column('cpu_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('ram_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('disk_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('mapped', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', 'hypervisor_hostname', 'deleted', name='uniq_compute_nodes0host0hypervisor_hostname0deleted'),
        sa.UniqueConstraint('uuid', name='compute_nodes_uuid_idx'),
        **TABLE_KWARGS)
    op.create_table('instances',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('image_ref', sa.String(length=255), nullable=True),
        sa.Column('kernel_id', sa.String(length=255), nullable=True),
        sa.Column('ramdisk_id', sa.String(length=255), nullable=True),
        sa.Column('hostname', sa.String(length=255), nullable=True),
        sa.Column('launch_index', sa.Integer(), nullable=True),
        sa.Column('key_name', sa.String(length=255), nullable=True),
        sa.Column('key_data', MediumText, nullable=True),
        sa.Column('power_state', sa.Integer(), nullable=True),
        sa.Column('vm_state', sa.String(length=255), nullable=True),
        sa.Column('task_state', sa.String(length=255), nullable=True),
        sa.Column('memory_mb', sa.Integer(), nullable=True),
        sa.Column('vcpus', sa.Integer(), nullable=True),
        sa.Column('root_gb', sa.Integer(), nullable=True),
        sa.Column('ephemeral_gb', sa.Integer(), nullable=True),
        sa.Column('instance_type_id', sa.Integer(), nullable=True),
        sa.Column('user_data', MediumText, nullable=True),
        sa.Column('reservation_id', sa.String(length=255), nullable=True),
        sa.Column('launched_at', sa.DateTime(), nullable=True),
        sa.Column('terminated_at', sa.DateTime(), nullable=True),
        sa.Column('availability_zone', sa.String(length=255), nullable=True),
        sa.Column('display_name', sa.String(length=255), nullable=True),
        sa.Column('display_description', sa.Text(), nullable=True),
        sa.Column('launched_on', sa.Text(), nullable=True),
        sa.Column('locked', sa.Boolean(), nullable=True),
        sa.Column('locked_by', sa.String(length=5), nullable=True),
        sa.Column('os_type', sa.String(length=255), nullable=True),
        sa.Column('architecture', sa.String(length=255), nullable=True),
        sa.Column('root_device_name', sa.String(length=255), nullable=True),
        sa.Column('config_drive', sa.String(length=255), nullable=True),
        sa.Column('access_ip_v4', sa.String(length=39), nullable=True),
        sa.Column('access_ip_v6', sa.String(length=39), nullable=True),
        sa.Column('auto_disk_config', sa.Boolean(), nullable=True),
        sa.Column('progress', sa.Integer(), nullable=True),
        sa.Column('shutdown_terminate', sa.Boolean(), nullable=True),
        sa.Column('disable_terminate', sa.Boolean(), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('node', sa.String(length=255), nullable=True),
        sa.Column('compute_id', sa.BigInteger(), nullable=True),
        sa.Column('hidden', sa.Boolean(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
        **TABLE_KWARGS)
    op.create_index('instances_host_deleted_idx', 'instances', ['host', 'deleted'], unique=False)
    op.create_index('instances_project_id_deleted_idx', 'instances', ['project_id', 'deleted'], unique=False)
    op.create_index('instances_reservation_id_idx', 'instances', ['reservation_id'], unique=False)
    op.create_index('instances_updated_at_project_id_idx', 'instances', ['updated_at', 'project_id'], unique=False)
    op.create_table('services',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('binary', sa.String(length=255), nullable=True),
        sa.Column('topic', sa.String(length=255), nullable=True),
        sa.Column('report_count', sa.Integer(), nullable=False),
        sa.Column('disabled', sa.Boolean(), nullable=True),
        sa.Column('disabled_reason', sa.String(length=255), nullable=True),
        sa.Column('last_seen_up', sa.DateTime(), nullable=True),
        sa.Column('forced_down', sa.Boolean(), nullable=True),
        sa.Column('version', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('host', 'binary', 'deleted', name='uniq_services0host0binary0deleted'),
        sa.UniqueConstraint('host', 'topic', 'deleted', name='uniq_services0host0topic0deleted'),
        sa.UniqueConstraint('uuid', name='uniq_services0uuid'),
        **TABLE_KWARGS)
    op.create_table('tags',
        sa.Column('resource_id', sa.String(length=36), nullable=False),
        sa.Column('tag', sa.String(length=80), nullable=False),
        sa.PrimaryKeyConstraint('resource_id', 'tag'),
        **TABLE_KWARGS)
    op.create_index('tags_tag_idx', 'tags', ['tag'], unique=False)
    op.create_table('block_device_mapping',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=True),
        sa.Column('source_type', sa.String(length=255), nullable=True),
        sa.Column('destination_type', sa.String(length=255), nullable=True),
        sa.Column('guest_format', sa.String(length=255), nullable=True),
        sa.Column('device_type', sa.String(length=255), nullable=True),
        sa.Column('disk_bus', sa.String(length=255), nullable=True),
        sa.Column('boot_index', sa.Integer(), nullable=True),
        sa.Column('device_name', sa.String(length=255), nullable=True),
        sa.Column('delete_on_termination', sa.Boolean(), nullable=True),
        sa.Column('snapshot_id', sa.String(length=36), nullable=True),
        sa.Column('volume_id', sa.String(length=36), nullable=True),
        sa.Column('volume_size', sa.Integer(), nullable=True),
        sa.Column('image_id', sa.String(length=36), nullable=True),
        sa.Column('no_device', sa.Boolean(), nullable=True),
        sa.Column('connection_info', MediumText, nullable=True),
        sa.Column('tag', sa.String(length=255), nullable=True),
        sa.Column('attachment_id', sa.String(length=36), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_block_device_mapping0uuid'),
        **TABLE_KWARGS)
    op.create_index('block_device_mapping_instance_uuid_idx', 'block_device_mapping', ['instance_uuid'], unique=False)
    op.create_table('instance_actions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('action', sa.String(length=255), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=True),
        sa.Column('request_id', sa.String(length=255), nullable=True),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('start_time', sa.DateTime(), nullable=True),
        sa.Column('finish_time', sa.DateTime(), nullable=True),
        sa.Column('message', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('instance_actions_instance_uuid_updated_at_idx', 'instance_actions', ['instance_uuid', 'updated_at'], unique=False)
    op.create_index('instance_uuid_idx', 'instance_actions', ['instance_uuid'], unique=False)
    op.create_index('request_id_idx', 'instance_actions', ['request_id'], unique=False)
    op.create_table('instance_extra',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('flavor', MediumText, nullable=True),
        sa.Column('keypairs', MediumText, nullable=True),
        sa.Column('numa_topology', MediumText, nullable=True),
        sa.Column('pci_requests', MediumText, nullable=True),
        sa.Column('vcpu_model', MediumText, nullable=True),
        sa.Column('migration_context', MediumText, nullable=True),
        sa.Column('trusted_certs', MediumText, nullable=True),
        sa.Column('resources', MediumText, nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('instance_extra_idx', 'instance_extra', ['instance_uuid'], unique=False)
    op.create_table('instance_faults',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('code', sa.Integer(), nullable=False),
        sa.Column('message', sa.String(length=255), nullable=True),
        sa.Column('details', MediumText, nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('instance_faults_instance_uuid_deleted_created_at_idx', 'instance_faults', ['instance_uuid', 'deleted', 'created_at'], unique=False)
    op.create_table('instance_info_caches',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('network_info', MediumText, nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('instance_uuid', name='uniq_instance_info_caches0instance_uuid'),
        **TABLE_KWARGS)
    op.create_table('instance_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=True),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('instance_metadata_instance_uuid_idx', 'instance_metadata', ['instance_uuid'], unique=False)
    op.create_table('instance_system_metadata',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('instance_uuid', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('value', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)
    op.create_index('instance_uuid', 'instance_system_metadata', ['instance_uuid'], unique=False)
    op.create_table('migrations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('source_compute', sa.String(length=255), nullable=True),
        sa.Column('dest_compute', sa.String(length=255), nullable=True),
        sa.Column('source_node', sa.String(length=255), nullable=True),
        sa.Column('dest_node', sa.String(length=255), nullable=True),
        sa.Column('dest_host', sa.String(length=255), nullable=True),
        sa.Column('old_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('new_instance_type_id', sa.Integer(), nullable=True),
        sa.Column('instance_uuid', sa.String(length=36), nullable=True),
        sa.Column('status', sa.String(length=255), nullable=True),
        sa.Column('migration_type', sa.String(length=20), nullable=True),
        sa.Column('hidden', sa.Boolean(), nullable=True),
        sa.Column('cross_cell_move', sa.Boolean(), nullable=True),
        sa.Column('user_id', sa.String(length=255), nullable=True),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['instance_uuid'], ['instances.uuid'], ),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_migrations0uuid'),
        **TABLE_KWARGS)
    op.create_index('migrations_instance_uuid_and_status_idx', 'migrations', ['deleted', 'instance_uuid', 'status'], unique=False)
    op.create_table('instance_actions_events',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('event', sa.String(length=255), nullable=True),
        sa.Column('action_id', sa.Integer(), nullable=True),
        sa.Column('start_time', sa.DateTime(), nullable=True),
        sa.Column('finish_time', sa.DateTime(), nullable=True),
        sa.Column('result', sa.String(length=255), nullable=True),
        sa.Column('traceback', sa.Text(), nullable=True),
        sa.Column('host', sa.String(length=255), nullable=True),
        sa.Column('details', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('deleted_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['action_id'], ['instance_actions.id'], ),
        sa.PrimaryKeyConstraint('id'),
        **TABLE_KWARGS)


def downgrade() -> None:
    # Dropping a table drops its indexes.
    op.drop_table('instance_actions_events')
    op.drop_table('migrations')
    op.drop_table('instance_system_metadata')
    op.drop_table('instance_metadata')
    op.drop_table('instance_info_caches')
    op.drop_table('instance_faults')
    op.drop_table('instance_extra')
    op.drop_table('instance_actions')
    op.drop_table('block_device_mapping')
    op.drop_table('tags')
    op.drop_table('services')
    op.drop_table('instances')
    op.drop_table('compute_nodes')
