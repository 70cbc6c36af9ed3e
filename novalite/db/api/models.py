"""SQLAlchemy models of the API database (cells v2: mappings, build requests, flavors...)."""
from __future__ import annotations

import datetime
from typing import ClassVar

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from novalite.db.types import MediumText, TimestampMixin


class Base(DeclarativeBase):
    # Every model here is mapped to one Table: its Core statements need the Table's
    # insert()/update()/delete(), which the library's FromClause type does not declare.
    __table__: ClassVar[Table]


class CellMapping(TimestampMixin, Base):
    __tablename__ = 'cell_mappings'
    __table_args__ = (UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))
    transport_url: Mapped[str] = mapped_column(Text, nullable=False)
    database_connection: Mapped[str] = mapped_column(Text, nullable=False)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)


class HostMapping(TimestampMixin, Base):
    __tablename__ = 'host_mappings'
    __table_args__ = (UniqueConstraint('host', name='uniq_host_mappings0host'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cell_id: Mapped[int] = mapped_column(ForeignKey('cell_mappings.id'), nullable=False)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    cell_mapping: Mapped[CellMapping] = relationship(lazy='joined')


class InstanceMapping(TimestampMixin, Base):
    __tablename__ = 'instance_mappings'
    __table_args__ = (
        UniqueConstraint('instance_uuid', name='uniq_instance_mappings0instance_uuid'),
        Index('instance_mappings_project_id_idx', 'project_id'),
        Index('instance_mappings_user_id_project_id_idx', 'user_id', 'project_id'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    cell_id: Mapped[int | None] = mapped_column(ForeignKey('cell_mappings.id'))
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    queued_for_delete: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    cell_mapping: Mapped[CellMapping | None] = relationship(lazy='joined')


class BuildRequest(TimestampMixin, Base):
    __tablename__ = 'build_requests'
    __table_args__ = (
        UniqueConstraint('instance_uuid', name='uniq_build_requests0instance_uuid'),
        Index('build_requests_project_id_idx', 'project_id'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str | None] = mapped_column(String(255))
    instance: Mapped[str | None] = mapped_column(MediumText)
    block_device_mappings: Mapped[str | None] = mapped_column(MediumText)
    tags: Mapped[str | None] = mapped_column(Text)
    # Which build of it counts (a re-drive after a lost build starts the next one), when
    # a conductor took that build, and whether the user deleted it meanwhile.
    attempt: Mapped[int] = mapped_column(Integer, nullable=False, default=0,
                                         server_default='0')
    taken_at: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    delete_requested: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False,
                                                   server_default=false())


class RequestSpec(TimestampMixin, Base):
    __tablename__ = 'request_specs'
    __table_args__ = (
        UniqueConstraint('instance_uuid', name='uniq_request_specs0instance_uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    spec: Mapped[str] = mapped_column(MediumText, nullable=False)


class Flavor(TimestampMixin, Base):
    __tablename__ = 'flavors'
    __table_args__ = (UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
                      UniqueConstraint('name', name='uniq_flavors0name'))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    memory_mb: Mapped[int] = mapped_column(Integer, nullable=False)
    vcpus: Mapped[int] = mapped_column(Integer, nullable=False)
    root_gb: Mapped[int | None] = mapped_column(Integer)
    ephemeral_gb: Mapped[int | None] = mapped_column(Integer)
    swap: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    vcpu_weight: Mapped[int | None] = mapped_column(Integer)
    flavorid: Mapped[str] = mapped_column(String(255), nullable=False)
    rxtx_factor: Mapped[float | None] = mapped_column(Float, default=1.0)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    description: Mapped[str | None] = mapped_column(Text)
    extra_specs: Mapped[list[FlavorExtraSpecs]] = relationship(
        lazy='selectin', cascade='all, delete-orphan')
    projects: Mapped[list[FlavorProjects]] = relationship(
        lazy='selectin', cascade='all, delete-orphan')


class FlavorExtraSpecs(TimestampMixin, Base):
    __tablename__ = 'flavor_extra_specs'
    __table_args__ = (
        UniqueConstraint('flavor_id', 'key', name='uniq_flavor_extra_specs0flavor_id0key'),
        Index('flavor_extra_specs_flavor_id_key_idx', 'flavor_id', 'key'),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str | None] = mapped_column(String(255))
    flavor_id: Mapped[int] = mapped_column(ForeignKey('flavors.id'), nullable=False)


class FlavorProjects(TimestampMixin, Base):
    __tablename__ = 'flavor_projects'
    __table_args__ = (UniqueConstraint('flavor_id', 'project_id',
                                       name='uniq_flavor_projects0flavor_id0project_id'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    flavor_id: Mapped[int] = mapped_column(ForeignKey('flavors.id'), nullable=False)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)


class KeyPair(TimestampMixin, Base):
    __tablename__ = 'key_pairs'
    __table_args__ = (UniqueConstraint('user_id', 'name', name='uniq_key_pairs0user_id0name'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    fingerprint: Mapped[str | None] = mapped_column(String(255))
    public_key: Mapped[str | None] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Enum('ssh', 'x509', name='keypair_types'),
                                      nullable=False, default='ssh')


class InstanceGroup(TimestampMixin, Base):
    __tablename__ = 'instance_groups'
    __table_args__ = (UniqueConstraint('uuid', name='uniq_instance_groups0uuid'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))


class InstanceGroupPolicy(TimestampMixin, Base):
    __tablename__ = 'instance_group_policy'
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    policy: Mapped[str | None] = mapped_column(String(255))
    rules: Mapped[str | None] = mapped_column(Text)
    group_id: Mapped[int] = mapped_column(ForeignKey('instance_groups.id'), nullable=False)


class InstanceGroupMember(TimestampMixin, Base):
    __tablename__ = 'instance_group_member'
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_uuid: Mapped[str | None] = mapped_column(String(255))
    group_id: Mapped[int] = mapped_column(ForeignKey('instance_groups.id'), nullable=False)


class Aggregate(TimestampMixin, Base):
    __tablename__ = 'aggregates'
    __table_args__ = (UniqueConstraint('name', name='uniq_aggregate0name'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(String(36), index=True)
    name: Mapped[str | None] = mapped_column(String(255))


class AggregateHost(TimestampMixin, Base):
    __tablename__ = 'aggregate_hosts'
    __table_args__ = (UniqueConstraint('host', 'aggregate_id',
                                       name='uniq_aggregate_hosts0host0aggregate_id'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str | None] = mapped_column(String(255))
    aggregate_id: Mapped[int] = mapped_column(ForeignKey('aggregates.id'), nullable=False)


class AggregateMetadata(TimestampMixin, Base):
    __tablename__ = 'aggregate_metadata'
    __table_args__ = (UniqueConstraint('aggregate_id', 'key',
                                       name='uniq_aggregate_metadata0aggregate_id0key'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    aggregate_id: Mapped[int] = mapped_column(ForeignKey('aggregates.id'), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    value: Mapped[str] = mapped_column(String(255), nullable=False)


class Quota(TimestampMixin, Base):
    __tablename__ = 'quotas'
    __table_args__ = (UniqueConstraint('project_id', 'resource',
                                       name='uniq_quotas0project_id0resource'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(String(255))
    resource: Mapped[str] = mapped_column(String(255), nullable=False)
    hard_limit: Mapped[int | None] = mapped_column(Integer)


class ProjectUserQuota(TimestampMixin, Base):
    __tablename__ = 'project_user_quotas'
    __table_args__ = (UniqueConstraint('user_id', 'project_id', 'resource',
                                       name='uniq_project_user_quotas0user_id0project_id0resource'),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), nullable=False)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    resource: Mapped[str] = mapped_column(String(255), nullable=False)
    hard_limit: Mapped[int | None] = mapped_column(Integer)


class QuotaClass(TimestampMixin, Base):
    __tablename__ = 'quota_classes'
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    class_name: Mapped[str | None] = mapped_column(String(255), index=True)
    resource: Mapped[str | None] = mapped_column(String(255))
    hard_limit: Mapped[int | None] = mapped_column(Integer)


class QuotaLock(TimestampMixin, Base):
    """One row per project that creates servers under a limit: a create locks its row
    (an UPDATE, so every backend serializes it: a row lock on MariaDB and PostgreSQL, the
    write lock on SQLite) to count and insert its build requests alone. See
    ``novalite.quota.project_lock``."""

    __tablename__ = 'quota_locks'
    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)


# Mappings of the instances ``novalite-manage db archive_deleted_rows`` archived (beyond
# Nova, which deletes them): which cell a purged server lived in stays known until ``db
# purge``. The columns of instance_mappings, no constraint, and the instance's deleted_at.
shadow_instance_mappings = Table(
    'shadow_instance_mappings', Base.metadata,
    *(Column(column.name, column.type, nullable=column.nullable)
      for column in InstanceMapping.__table__.columns),
    Column('deleted_at', DateTime, nullable=True),
    Index('shadow_instance_mappings_instance_uuid_idx', 'instance_uuid'))
