"""SQLAlchemy models of a cell database (the same schema in cell0 and every cell).

Rows that Nova soft-deletes carry ``deleted`` (0 while alive, the row id once deleted)
and ``deleted_at``, so unique keys can include ``deleted``.
"""
from __future__ import annotations

import datetime
from typing import ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from novalite.db.types import MediumText, TimestampMixin


class Base(DeclarativeBase):
    # Every model here is mapped to one Table: its Core statements need the Table's
    # insert()/update()/delete(), which the library's FromClause type does not declare.
    __table__: ClassVar[Table]


class SoftDeleteMixin:
    deleted_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    deleted: Mapped[int] = mapped_column(Integer, default=0, nullable=False)


class Instance(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instances'
    __table_args__ = (
        UniqueConstraint('uuid', name='uniq_instances0uuid'),
        Index('instances_project_id_deleted_idx', 'project_id', 'deleted'),
        Index('instances_host_deleted_idx', 'host', 'deleted'),
        Index('instances_updated_at_project_id_idx', 'updated_at', 'project_id'),
        Index('instances_reservation_id_idx', 'reservation_id'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    image_ref: Mapped[str | None] = mapped_column(String(255))
    kernel_id: Mapped[str | None] = mapped_column(String(255))
    ramdisk_id: Mapped[str | None] = mapped_column(String(255))
    hostname: Mapped[str | None] = mapped_column(String(255))
    launch_index: Mapped[int | None] = mapped_column(Integer)
    key_name: Mapped[str | None] = mapped_column(String(255))
    key_data: Mapped[str | None] = mapped_column(MediumText)
    power_state: Mapped[int | None] = mapped_column(Integer)
    vm_state: Mapped[str | None] = mapped_column(String(255))
    task_state: Mapped[str | None] = mapped_column(String(255))
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    vcpus: Mapped[int | None] = mapped_column(Integer)
    root_gb: Mapped[int | None] = mapped_column(Integer)
    ephemeral_gb: Mapped[int | None] = mapped_column(Integer)
    instance_type_id: Mapped[int | None] = mapped_column(Integer)
    user_data: Mapped[str | None] = mapped_column(MediumText)
    reservation_id: Mapped[str | None] = mapped_column(String(255))
    launched_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    terminated_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    availability_zone: Mapped[str | None] = mapped_column(String(255))
    display_name: Mapped[str | None] = mapped_column(String(255))
    display_description: Mapped[str | None] = mapped_column(Text)
    launched_on: Mapped[str | None] = mapped_column(Text)
    locked: Mapped[bool | None] = mapped_column(Boolean)
    locked_by: Mapped[str | None] = mapped_column(String(5))
    os_type: Mapped[str | None] = mapped_column(String(255))
    architecture: Mapped[str | None] = mapped_column(String(255))
    root_device_name: Mapped[str | None] = mapped_column(String(255))
    config_drive: Mapped[str | None] = mapped_column(String(255))
    access_ip_v4: Mapped[str | None] = mapped_column(String(39))
    access_ip_v6: Mapped[str | None] = mapped_column(String(39))
    auto_disk_config: Mapped[bool | None] = mapped_column(Boolean)
    progress: Mapped[int | None] = mapped_column(Integer)
    shutdown_terminate: Mapped[bool | None] = mapped_column(Boolean)
    disable_terminate: Mapped[bool | None] = mapped_column(Boolean)
    host: Mapped[str | None] = mapped_column(String(255))
    node: Mapped[str | None] = mapped_column(String(255))
    compute_id: Mapped[int | None] = mapped_column(BigInteger)
    hidden: Mapped[bool | None] = mapped_column(Boolean, default=False)


class InstanceExtra(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_extra'
    __table_args__ = (Index('instance_extra_idx', 'instance_uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(ForeignKey('instances.uuid'), nullable=False)
    flavor: Mapped[str | None] = mapped_column(MediumText)
    keypairs: Mapped[str | None] = mapped_column(MediumText)
    numa_topology: Mapped[str | None] = mapped_column(MediumText)
    pci_requests: Mapped[str | None] = mapped_column(MediumText)
    vcpu_model: Mapped[str | None] = mapped_column(MediumText)
    migration_context: Mapped[str | None] = mapped_column(MediumText)
    trusted_certs: Mapped[str | None] = mapped_column(MediumText)
    resources: Mapped[str | None] = mapped_column(MediumText)


class InstanceInfoCache(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_info_caches'
    __table_args__ = (
        UniqueConstraint('instance_uuid', name='uniq_instance_info_caches0instance_uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(ForeignKey('instances.uuid'), nullable=False)
    network_info: Mapped[str | None] = mapped_column(MediumText)


class InstanceMetadata(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_metadata'
    __table_args__ = (Index('instance_metadata_instance_uuid_idx', 'instance_uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str | None] = mapped_column(String(255))
    value: Mapped[str | None] = mapped_column(String(255))
    instance_uuid: Mapped[str] = mapped_column(ForeignKey('instances.uuid'), nullable=False)


class InstanceSystemMetadata(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_system_metadata'
    __table_args__ = (Index('instance_uuid', 'instance_uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(ForeignKey('instances.uuid'), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))


class InstanceFault(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_faults'
    __table_args__ = (
        Index('instance_faults_instance_uuid_deleted_created_at_idx',
              'instance_uuid', 'deleted', 'created_at'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(ForeignKey('instances.uuid'), nullable=False)
    code: Mapped[int] = mapped_column(Integer, nullable=False)
    message: Mapped[str | None] = mapped_column(String(255))
    details: Mapped[str | None] = mapped_column(MediumText)
    host: Mapped[str | None] = mapped_column(String(255))


class InstanceAction(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_actions'
    __table_args__ = (
        Index('instance_uuid_idx', 'instance_uuid'),
        Index('request_id_idx', 'request_id'),
        Index('instance_actions_instance_uuid_updated_at_idx', 'instance_uuid', 'updated_at'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    action: Mapped[str | None] = mapped_column(String(255))
    instance_uuid: Mapped[str | None] = mapped_column(ForeignKey('instances.uuid'))
    request_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    start_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    finish_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    message: Mapped[str | None] = mapped_column(String(255))


class InstanceActionEvent(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'instance_actions_events'
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event: Mapped[str | None] = mapped_column(String(255))
    action_id: Mapped[int | None] = mapped_column(ForeignKey('instance_actions.id'))
    start_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    finish_time: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    result: Mapped[str | None] = mapped_column(String(255))
    traceback: Mapped[str | None] = mapped_column(Text)
    host: Mapped[str | None] = mapped_column(String(255))
    details: Mapped[str | None] = mapped_column(Text)


class BlockDeviceMapping(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'block_device_mapping'
    __table_args__ = (
        Index('block_device_mapping_instance_uuid_idx', 'instance_uuid'),
        UniqueConstraint('uuid', name='uniq_block_device_mapping0uuid'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36))
    instance_uuid: Mapped[str | None] = mapped_column(ForeignKey('instances.uuid'))
    source_type: Mapped[str | None] = mapped_column(String(255))
    destination_type: Mapped[str | None] = mapped_column(String(255))
    guest_format: Mapped[str | None] = mapped_column(String(255))
    device_type: Mapped[str | None] = mapped_column(String(255))
    disk_bus: Mapped[str | None] = mapped_column(String(255))
    boot_index: Mapped[int | None] = mapped_column(Integer)
    device_name: Mapped[str | None] = mapped_column(String(255))
    delete_on_termination: Mapped[bool | None] = mapped_column(Boolean, default=False)
    snapshot_id: Mapped[str | None] = mapped_column(String(36))
    volume_id: Mapped[str | None] = mapped_column(String(36))
    volume_size: Mapped[int | None] = mapped_column(Integer)
    image_id: Mapped[str | None] = mapped_column(String(36))
    no_device: Mapped[bool | None] = mapped_column(Boolean)
    connection_info: Mapped[str | None] = mapped_column(MediumText)
    tag: Mapped[str | None] = mapped_column(String(255))
    attachment_id: Mapped[str | None] = mapped_column(String(36))
    volume_type: Mapped[str | None] = mapped_column(String(255))


class Tag(Base):
    __tablename__ = 'tags'
    __table_args__ = (Index('tags_tag_idx', 'tag'),)
    resource_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    tag: Mapped[str] = mapped_column(String(80), primary_key=True)


class Service(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'services'
    __table_args__ = (
        UniqueConstraint('host', 'topic', 'deleted', name='uniq_services0host0topic0deleted'),
        UniqueConstraint('host', 'binary', 'deleted',
                         name='uniq_services0host0binary0deleted'),
        UniqueConstraint('uuid', name='uniq_services0uuid'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36))
    host: Mapped[str | None] = mapped_column(String(255))
    binary: Mapped[str | None] = mapped_column(String(255))
    topic: Mapped[str | None] = mapped_column(String(255))
    report_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    disabled: Mapped[bool | None] = mapped_column(Boolean, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(String(255))
    last_seen_up: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    forced_down: Mapped[bool | None] = mapped_column(Boolean, default=False)
    version: Mapped[int | None] = mapped_column(Integer, default=0)


class ComputeNode(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'compute_nodes'
    __table_args__ = (
        UniqueConstraint('host', 'hypervisor_hostname', 'deleted',
                         name='uniq_compute_nodes0host0hypervisor_hostname0deleted'),
        UniqueConstraint('uuid', name='compute_nodes_uuid_idx'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36))
    service_id: Mapped[int | None] = mapped_column(Integer)
    host: Mapped[str | None] = mapped_column(String(255))
    vcpus: Mapped[int] = mapped_column(Integer, nullable=False)
    memory_mb: Mapped[int] = mapped_column(Integer, nullable=False)
    local_gb: Mapped[int] = mapped_column(Integer, nullable=False)
    vcpus_used: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    memory_mb_used: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    local_gb_used: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    hypervisor_type: Mapped[str] = mapped_column(MediumText, nullable=False)
    hypervisor_version: Mapped[int] = mapped_column(Integer, nullable=False)
    hypervisor_hostname: Mapped[str | None] = mapped_column(String(255))
    cpu_info: Mapped[str] = mapped_column(MediumText, nullable=False)
    free_ram_mb: Mapped[int | None] = mapped_column(Integer)
    free_disk_gb: Mapped[int | None] = mapped_column(Integer)
    current_workload: Mapped[int | None] = mapped_column(Integer)
    running_vms: Mapped[int | None] = mapped_column(Integer)
    disk_available_least: Mapped[int | None] = mapped_column(Integer)
    host_ip: Mapped[str | None] = mapped_column(String(39))
    supported_instances: Mapped[str | None] = mapped_column(Text)
    stats: Mapped[str | None] = mapped_column(Text, default='{}')
    cpu_allocation_ratio: Mapped[float | None] = mapped_column(Float)
    ram_allocation_ratio: Mapped[float | None] = mapped_column(Float)
    disk_allocation_ratio: Mapped[float | None] = mapped_column(Float)
    mapped: Mapped[int | None] = mapped_column(Integer, default=0)


class Migration(TimestampMixin, SoftDeleteMixin, Base):
    __tablename__ = 'migrations'
    __table_args__ = (
        Index('migrations_instance_uuid_and_status_idx', 'deleted', 'instance_uuid', 'status'),
        UniqueConstraint('uuid', name='uniq_migrations0uuid'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36))
    source_compute: Mapped[str | None] = mapped_column(String(255))
    dest_compute: Mapped[str | None] = mapped_column(String(255))
    source_node: Mapped[str | None] = mapped_column(String(255))
    dest_node: Mapped[str | None] = mapped_column(String(255))
    dest_host: Mapped[str | None] = mapped_column(String(255))
    old_instance_type_id: Mapped[int | None] = mapped_column(Integer)
    new_instance_type_id: Mapped[int | None] = mapped_column(Integer)
    instance_uuid: Mapped[str | None] = mapped_column(ForeignKey('instances.uuid'))
    status: Mapped[str | None] = mapped_column(String(255))
    migration_type: Mapped[str | None] = mapped_column(String(20))
    hidden: Mapped[bool | None] = mapped_column(Boolean, default=False)
    cross_cell_move: Mapped[bool | None] = mapped_column(Boolean, default=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    # A live migration's progress, in bytes (the source host's driver reports it).
    memory_total: Mapped[int | None] = mapped_column(BigInteger)
    memory_processed: Mapped[int | None] = mapped_column(BigInteger)
    memory_remaining: Mapped[int | None] = mapped_column(BigInteger)
    disk_total: Mapped[int | None] = mapped_column(BigInteger)
    disk_processed: Mapped[int | None] = mapped_column(BigInteger)
    disk_remaining: Mapped[int | None] = mapped_column(BigInteger)


class TaskLog(TimestampMixin, SoftDeleteMixin, Base):
    """One run of a periodic task on one host for one period (the usage audit's)."""
    __tablename__ = 'task_log'
    __table_args__ = (
        UniqueConstraint('task_name', 'host', 'period_beginning', 'period_ending',
                         name='uniq_task_log0task_name0host0period_beginning0period_ending'),
        Index('ix_task_log_period_beginning', 'period_beginning'),
        Index('ix_task_log_host', 'host'),
        Index('ix_task_log_period_ending', 'period_ending'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_name: Mapped[str] = mapped_column(String(255), nullable=False)
    state: Mapped[str] = mapped_column(String(255), nullable=False)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    period_beginning: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    period_ending: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=False)
    message: Mapped[str] = mapped_column(String(255), nullable=False)
    task_items: Mapped[int | None] = mapped_column(Integer, default=0)
    errors: Mapped[int | None] = mapped_column(Integer, default=0)


class ConsoleAuthToken(TimestampMixin, Base):
    """A console token the server's host authorized: only its sha256 hash is kept.

    Deleted, not soft-deleted: when redeemed, when its server is deleted or moved, and
    once expired (``expires``: a UNIX time).
    """
    __tablename__ = 'console_auth_tokens'
    __table_args__ = (
        Index('console_auth_tokens_instance_uuid_idx', 'instance_uuid'),
        Index('console_auth_tokens_host_expires_idx', 'host', 'expires'),
        Index('console_auth_tokens_token_hash_instance_uuid_idx', 'token_hash',
              'instance_uuid'),
        UniqueConstraint('token_hash', name='uniq_console_auth_tokens0token_hash'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    console_type: Mapped[str] = mapped_column(String(255), nullable=False)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    port: Mapped[int] = mapped_column(Integer, nullable=False)
    tls_port: Mapped[int | None] = mapped_column(Integer)
    internal_access_path: Mapped[str | None] = mapped_column(String(255))
    instance_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    expires: Mapped[int] = mapped_column(Integer, nullable=False)
    access_url_base: Mapped[str | None] = mapped_column(String(255))


# Shadow tables: where ``novalite-manage db archive_deleted_rows`` moves soft-deleted rows
# (and ``db purge`` deletes them). Each has its table's columns, nullability and types
# but no key, index or constraint, so a row archived twice (an id reused after MySQL
# reset its counter) never stops an archive. Derived from the models: a column added to
# a table must be added to its shadow by the same migration (test_migration checks it).
SHADOW_PREFIX = 'shadow_'


def _shadow(table: Table) -> Table:
    return Table(SHADOW_PREFIX + table.name, Base.metadata,
                 *(Column(column.name, column.type, nullable=column.nullable)
                   for column in table.columns))


SHADOW_TABLES: dict[str, Table] = {
    table.name: _shadow(table) for table in list(Base.metadata.sorted_tables)
    if 'deleted' in table.c}
