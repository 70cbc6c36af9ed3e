"""HostMapping: which cell a compute host belongs to (API database)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import select
from novalite.objects import base
from novalite.objects.cell_mapping import CellMapping

if TYPE_CHECKING:
    from novalite import objects
    from novalite.db.api import models as api_db


@base.NovaliteObjectRegistry.register
class HostMapping(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    host: str
    cell_mapping: objects.CellMapping

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'host': fields.StringField(),
        'cell_mapping': fields.ObjectField('CellMapping'),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: api_db.HostMapping) -> HostMapping:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('cell_mapping',))
        obj.cell_mapping = CellMapping._from_db_object(context, row.cell_mapping)
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_host(cls, context: RequestContext, host: str) -> HostMapping:
        with engine.api_reader() as session:
            row = session.scalars(select(models.HostMapping).filter_by(host=host)).first()
            if row is None:
                raise exception.HostMappingNotFound(name=host)
            return cls._from_db_object(context, row)

    def create(self) -> None:
        with engine.api_writer() as session:
            row = models.HostMapping(host=self.host, cell_id=self.cell_mapping.id)
            session.add(row)
            session.flush()
            self.id = row.id
        self.obj_reset_changes()

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.HostMapping).filter_by(host=self.host)).first()
            if row is not None:
                session.delete(row)


@base.NovaliteObjectRegistry.register
class HostMappingList(base.ObjectListBase['HostMapping'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('HostMapping')}

    @classmethod
    def get_all(cls, context: RequestContext, cell_id: int | None = None) -> HostMappingList:
        with engine.api_reader() as session:
            query = select(models.HostMapping)
            if cell_id is not None:
                query = query.filter_by(cell_id=cell_id)
            rows = session.scalars(query)
            return cls(context, objects=[HostMapping._from_db_object(context, r) for r in rows])
