"""InstanceMapping: which cell an instance lives in, once it lives anywhere (API DB)."""
from __future__ import annotations

from oslo_versionedobjects import fields
from sqlalchemy import select, update

from novalite import exception
from novalite.db import engine
from novalite.db.api import models
from novalite.objects import base
from novalite.objects.cell_mapping import CellMapping


@base.NovaliteObjectRegistry.register
class InstanceMapping(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'instance_uuid': fields.UUIDField(),
        'cell_mapping': fields.ObjectField('CellMapping', nullable=True),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(nullable=True),
        'queued_for_delete': fields.BooleanField(default=False),
    }

    @classmethod
    def _from_db_object(cls, context, row) -> InstanceMapping:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('cell_mapping',))
        obj.cell_mapping = (CellMapping._from_db_object(context, row.cell_mapping)
                            if row.cell_mapping is not None else None)
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid: str) -> InstanceMapping:
        with engine.api_reader() as session:
            row = session.scalars(select(models.InstanceMapping)
                                  .filter_by(instance_uuid=instance_uuid)).first()
            if row is None:
                raise exception.InstanceMappingNotFound(uuid=instance_uuid)
            return cls._from_db_object(context, row)

    def _db_values(self) -> dict:
        values = self.obj_get_changes()
        if 'cell_mapping' in values:
            cell = values.pop('cell_mapping')
            values['cell_id'] = cell.id if cell is not None else None
        return values

    def create(self, session=None) -> None:
        """Insert the row, in ``session``'s transaction when one is given."""
        values = self._db_values()
        self.id = base.insert_row(models.InstanceMapping(**values), session).id
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
    def set_cell(cls, context, instance_uuid: str, cell_mapping) -> None:
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
class InstanceMappingList(base.ObjectListBase, base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('InstanceMapping')}

    @classmethod
    def get_by_instance_uuids(cls, context, uuids: list[str]) -> InstanceMappingList:
        with engine.api_reader() as session:
            rows = session.scalars(select(models.InstanceMapping)
                                   .where(models.InstanceMapping.instance_uuid.in_(uuids)))
            return cls(context, objects=[InstanceMapping._from_db_object(context, r)
                                         for r in rows])

    @classmethod
    def get_by_project_id(cls, context, project_id: str) -> InstanceMappingList:
        with engine.api_reader() as session:
            rows = session.scalars(select(models.InstanceMapping)
                                   .filter_by(project_id=project_id))
            return cls(context, objects=[InstanceMapping._from_db_object(context, r)
                                         for r in rows])
