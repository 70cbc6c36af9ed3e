"""InstanceMapping: which cell an instance lives in, once it lives anywhere (API DB)."""
from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import select, update
from novalite.objects import base
from novalite.objects.build_request import BuildRequest
from novalite.objects.cell_mapping import CellMapping

_BUILD_REQUEST_COLUMNS = ('id', 'project_id', 'user_id', 'instance', 'tags', 'created_at',
                          'updated_at')


@functools.cache
def _reads() -> types.SimpleNamespace:
    """The mapping reads as Core statements built once (on first use: a compute never
    imports SQLAlchemy): each mapping row with its cell's columns (``cm_<name>``) in
    the same row, and for one server also its build request's (``br_<name>``)."""
    import sqlalchemy as sa

    from novalite.db.api import models as m
    mapping, cell = m.InstanceMapping.__table__, m.CellMapping.__table__
    build = m.BuildRequest.__table__
    cell_columns = [column.label('cm_' + column.name) for column in cell.c]
    with_cell = mapping.outerjoin(cell, mapping.c.cell_id == cell.c.id)
    base_query = sa.select(mapping, *cell_columns).select_from(with_cell)
    located = sa.select(mapping, *cell_columns,
                        *[build.c[name].label('br_' + name) for name in _BUILD_REQUEST_COLUMNS]
                        ).select_from(with_cell.outerjoin(
                            build, build.c.instance_uuid == mapping.c.instance_uuid))
    uuid: sa.BindParameter[str] = sa.bindparam('uuid')
    return types.SimpleNamespace(
        by_uuid=base_query.where(mapping.c.instance_uuid == uuid),
        by_uuids=base_query.where(
            mapping.c.instance_uuid.in_(sa.bindparam('uuids', expanding=True))),
        by_project=base_query.where(mapping.c.project_id == sa.bindparam('project_id')),
        located=located.where(mapping.c.instance_uuid == uuid))


def _prefixed(row: Row[Any], prefix: str) -> types.SimpleNamespace:
    """The columns of ``row`` named ``<prefix><name>``, as attributes ``name``."""
    return types.SimpleNamespace(**{key[len(prefix):]: value
                                    for key, value in row._mapping.items()
                                    if key.startswith(prefix)})


if TYPE_CHECKING:
    from sqlalchemy.engine import Row
    from sqlalchemy.orm import Session

    from novalite import objects


@base.NovaliteObjectRegistry.register
class InstanceMapping(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    instance_uuid: str
    cell_mapping: objects.CellMapping | None
    project_id: str
    user_id: str | None
    queued_for_delete: bool

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'instance_uuid': fields.UUIDField(),
        'cell_mapping': fields.ObjectField('CellMapping', nullable=True),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(nullable=True),
        'queued_for_delete': fields.BooleanField(default=False),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: Row[Any]) -> InstanceMapping:
        """The mapping of a row of ``_reads()`` (its cell's columns prefixed ``cm_``)."""
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('cell_mapping',))
        obj.cell_mapping = (CellMapping._from_db_object(context, _prefixed(row, 'cm_'))
                            if row.cell_id is not None else None)
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str) -> InstanceMapping:
        with engine.api_connection() as connection:
            row = connection.execute(_reads().by_uuid, {'uuid': instance_uuid}).first()
        if row is None:
            raise exception.InstanceMappingNotFound(uuid=instance_uuid)
        return cls._from_db_object(context, row)

    @classmethod
    def get_with_build_request(cls, context: RequestContext, instance_uuid: str
                               ) -> tuple[InstanceMapping, BuildRequest | None]:
        """The mapping and, while the server has no cell, its build request (None if
        the conductor deleted it meanwhile), read in one query: what a status poll of a
        server being scheduled needs.

        :raises InstanceMappingNotFound: no such server
        """
        with engine.api_connection() as connection:
            row = connection.execute(_reads().located, {'uuid': instance_uuid}).first()
        if row is None:
            raise exception.InstanceMappingNotFound(uuid=instance_uuid)
        mapping = cls._from_db_object(context, row)
        build_request = None
        if row.cell_id is None and row.br_id is not None:
            columns = _prefixed(row, 'br_')
            columns.instance_uuid = instance_uuid
            build_request = BuildRequest._from_db_object(context, columns)
        return mapping, build_request

    def _db_values(self) -> dict:
        values = self.obj_get_changes()
        if 'cell_mapping' in values:
            cell = values.pop('cell_mapping')
            values['cell_id'] = cell.id if cell is not None else None
        return values

    def create(self, session: Session | None = None) -> None:
        """Insert the row, in ``session``'s transaction when one is given."""
        values = self._db_values()
        self.id = base.insert_row(models.InstanceMapping, values, session)
        self.obj_reset_changes()

    def save(self) -> None:
        values = self._db_values()
        if values:
            with engine.api_writer() as session:
                session.execute(update(models.InstanceMapping)
                                .where(models.InstanceMapping.instance_uuid ==
                                       self.instance_uuid).values(**values))
        self.obj_reset_changes()

    @classmethod
    def set_cell(cls, context: RequestContext, instance_uuid: str,
                 cell_mapping: CellMapping) -> None:
        """Point the mapping of ``instance_uuid`` at ``cell_mapping``: one UPDATE, without
        reading the mapping first (the conductor, once the instance is in its cell)."""
        with engine.api_writer() as session:
            session.execute(update(models.InstanceMapping)
                            .where(models.InstanceMapping.instance_uuid == instance_uuid)
                            .values(cell_id=cell_mapping.id))

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.InstanceMapping)
                                  .filter_by(instance_uuid=self.instance_uuid)).first()
            if row is not None:
                session.delete(row)


@base.NovaliteObjectRegistry.register
class InstanceMappingList(base.ObjectListBase['InstanceMapping'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('InstanceMapping')}

    @classmethod
    def get_by_instance_uuids(cls, context: RequestContext,
                              uuids: list[str]) -> InstanceMappingList:
        if not uuids:
            return cls(context, objects=[])
        with engine.api_connection() as connection:
            rows = connection.execute(_reads().by_uuids, {'uuids': list(uuids)}).all()
        return cls(context, objects=[InstanceMapping._from_db_object(context, r)
                                     for r in rows])

    @classmethod
    def get_by_project_id(cls, context: RequestContext, project_id: str) -> InstanceMappingList:
        with engine.api_connection() as connection:
            rows = connection.execute(_reads().by_project, {'project_id': project_id}).all()
        return cls(context, objects=[InstanceMapping._from_db_object(context, r)
                                     for r in rows])
