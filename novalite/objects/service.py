"""Service: a running daemon (host + binary) and its heartbeat (cell database)."""
from __future__ import annotations

import datetime
from typing import Any

from oslo_utils import timeutils, uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import or_, select, update
from novalite.objects import base

# Bumped when the RPC interfaces of services change incompatibly.
SERVICE_VERSION = 1


@base.NovaliteObjectRegistry.register
class Service(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    host: str | None
    binary: str | None
    topic: str | None
    report_count: int
    disabled: bool
    disabled_reason: str | None
    last_seen_up: datetime.datetime | None
    forced_down: bool
    version: int

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'host': fields.StringField(nullable=True),
        'binary': fields.StringField(nullable=True),
        'topic': fields.StringField(nullable=True),
        'report_count': fields.IntegerField(default=0),
        'disabled': fields.BooleanField(default=False),
        'disabled_reason': fields.StringField(nullable=True),
        'last_seen_up': fields.DateTimeField(nullable=True),
        'forced_down': fields.BooleanField(default=False),
        'version': fields.IntegerField(default=0),
    }

    @classmethod
    @base.remotable
    def get_by_host_and_binary(cls, context: RequestContext, host: str,
                               binary: str) -> Service | None:
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.Service)
                                  .filter_by(host=host, binary=binary, deleted=0)).first()
            return cls._from_db_object(context, row) if row is not None else None

    @classmethod
    @base.remotable
    def get_by_id(cls, context: RequestContext, service_id: int) -> Service:
        with engine.cell_reader(context) as session:
            row = session.get(models.Service, service_id)
            if row is None or row.deleted:
                raise exception.ServiceNotFound(service_id=service_id)
            return cls._from_db_object(context, row)

    @base.remotable
    def create(self) -> None:
        values = self.obj_get_changes()
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('version', SERVICE_VERSION)
        values.pop('deleted', None)
        self._insert_in_cell(models.Service, values)

    @base.remotable
    def save(self) -> None:
        values = self.obj_get_changes()
        values.pop('deleted', None)
        for key in ('last_seen_up', 'created_at', 'updated_at', 'deleted_at'):
            if key in values:
                values[key] = base.naive_utc(values[key])
        with engine.cell_writer(self._context) as session:
            row = session.get(models.Service, self.id)
            if row is None:
                raise exception.ServiceNotFound(service_id=self.id)
            for key, value in values.items():
                setattr(row, key, value)
        self.obj_reset_changes()

    @base.remotable
    def heartbeat(self) -> None:
        """Count one more report and stamp last_seen_up, in one UPDATE."""
        now = timeutils.utcnow()
        with engine.cell_writer(self._context) as session:
            row = session.get(models.Service, self.id)
            if row is None or row.deleted:
                raise exception.ServiceNotFound(service_id=self.id)
            row.report_count = (row.report_count or 0) + 1
            row.last_seen_up = now
            row.updated_at = now
            self.report_count = row.report_count
        self.last_seen_up = now.replace(tzinfo=datetime.UTC)
        self.obj_reset_changes()

    @base.remotable
    def destroy(self) -> None:
        """Soft-delete the service; a compute service takes its nodes with it (as Nova's
        service_destroy), in the same transaction."""
        now = timeutils.utcnow()
        with engine.cell_writer(self._context) as session:
            row = session.get(models.Service, self.id)
            if row is None:
                return
            row.deleted = row.id
            row.deleted_at = now
            if row.binary == 'novalite-compute':
                nodes = models.ComputeNode
                session.execute(update(nodes).where(
                    nodes.deleted == 0,
                    or_(nodes.service_id == row.id, nodes.host == row.host))
                    .values(deleted=nodes.id, deleted_at=now))


@base.NovaliteObjectRegistry.register
class ServiceList(base.ObjectListBase['Service'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Service')}

    @classmethod
    @base.remotable
    def get_by_binary(cls, context: RequestContext, binary: str,
                      include_disabled: bool = True) -> ServiceList:
        with engine.cell_reader(context) as session:
            query = select(models.Service).filter_by(binary=binary, deleted=0)
            if not include_disabled:
                query = query.filter_by(disabled=False)
            return cls(context, objects=[Service._from_db_object(context, r)
                                         for r in session.scalars(query)])

    @classmethod
    def get_all(cls, context: RequestContext) -> ServiceList:
        with engine.cell_reader(context) as session:
            rows = session.scalars(select(models.Service).filter_by(deleted=0)
                                   .order_by(models.Service.id))
            return cls(context, objects=[Service._from_db_object(context, r) for r in rows])
