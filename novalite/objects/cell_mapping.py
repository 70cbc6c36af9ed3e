"""CellMapping: where one cell's database and message bus are (API database)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import CELL0_UUID, RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import select
from novalite.objects import base

if TYPE_CHECKING:
    import types

    from novalite.db.api import models as api_db


@base.NovaliteObjectRegistry.register
class CellMapping(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    name: str | None
    transport_url: str
    database_connection: str
    disabled: bool
    CELL0_UUID = CELL0_UUID

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'transport_url': fields.StringField(),
        'database_connection': fields.StringField(),
        'disabled': fields.BooleanField(default=False),
    }

    @property
    def identity(self) -> str:
        return '%s(%s)' % (self.uuid, self.name) if self.obj_attr_is_set('name') and \
            self.name else self.uuid

    @property
    def is_cell0(self) -> bool:
        return self.obj_attr_is_set('uuid') and self.uuid == CELL0_UUID

    @classmethod
    def _from_db_object(cls, context: RequestContext,
                        db_obj: api_db.CellMapping | types.SimpleNamespace) -> CellMapping:
        obj = cls(context)
        cls._set_from_db(obj, db_obj)
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_uuid(cls, context: RequestContext, uuid: str) -> CellMapping:
        with engine.api_reader() as session:
            row = session.scalars(select(models.CellMapping).filter_by(uuid=uuid)).first()
            if row is None:
                raise exception.CellMappingNotFound(uuid=uuid)
            return cls._from_db_object(context, row)

    def create(self) -> None:
        values = self.obj_get_changes()
        with engine.api_writer() as session:
            row = models.CellMapping(**values)
            session.add(row)
            session.flush()
            self._set_from_db(self, row)
        self.obj_reset_changes()

    def save(self) -> None:
        changes = self.obj_get_changes()
        with engine.api_writer() as session:
            row = session.scalars(select(models.CellMapping).filter_by(uuid=self.uuid)).one()
            for key, value in changes.items():
                setattr(row, key, value)
        self.obj_reset_changes()

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.CellMapping).filter_by(uuid=self.uuid)).first()
            if row is None:
                raise exception.CellMappingNotFound(uuid=self.uuid)
            session.delete(row)


@base.NovaliteObjectRegistry.register
class CellMappingList(base.ObjectListBase['CellMapping'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('CellMapping')}

    @classmethod
    def get_all(cls, context: RequestContext) -> CellMappingList:
        with engine.api_reader() as session:
            rows = session.scalars(select(models.CellMapping).order_by(models.CellMapping.id))
            return cls(context, objects=[CellMapping._from_db_object(context, r) for r in rows])

    @classmethod
    def get_by_disabled(cls, context: RequestContext, disabled: bool) -> CellMappingList:
        with engine.api_reader() as session:
            rows = session.scalars(select(models.CellMapping).filter_by(disabled=disabled)
                                   .order_by(models.CellMapping.id))
            return cls(context, objects=[CellMapping._from_db_object(context, r) for r in rows])
