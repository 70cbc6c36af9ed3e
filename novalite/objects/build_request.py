"""BuildRequest: a server that is not yet in a cell (API database).

It holds the whole Instance object, serialized, so that the API can show and list the
server while the conductor is still scheduling it.
"""
from __future__ import annotations

import functools
import types

from oslo_versionedobjects import fields

from novalite import exception
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import select
from novalite.objects import base
from novalite.objects.instance import ParsedOnce

# The instances of the build requests read lately, deserialized once each: a client
# polls its new server several times before the conductor has scheduled it.
_instances = ParsedOnce(base.obj_from_json, size=128)


@functools.cache
def _statements() -> types.SimpleNamespace:
    """The build request's Core statements, built once, on first use."""
    import sqlalchemy as sa

    from novalite.db.api import models as m
    table = m.BuildRequest.__table__
    return types.SimpleNamespace(
        by_uuid=sa.select(table).where(table.c.instance_uuid == sa.bindparam('uuid')),
        all=sa.select(table),
        by_project=sa.select(table).where(table.c.project_id == sa.bindparam('project_id')),
        delete=sa.delete(table).where(table.c.instance_uuid == sa.bindparam('uuid')))


@base.NovaliteObjectRegistry.register
class BuildRequest(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(),
        'instance_uuid': fields.UUIDField(),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(nullable=True),
        'instance': fields.ObjectField('Instance'),
        'tags': fields.ListOfStringsField(default=[]),
    }

    @classmethod
    def _from_db_object(cls, context, row) -> BuildRequest:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('instance', 'tags'))
        obj.instance = _instances(row.instance)
        obj.instance._context = context
        obj.tags = base.from_json(row.tags, [])
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid: str) -> BuildRequest:
        with engine.api_connection() as connection:
            row = connection.execute(_statements().by_uuid, {'uuid': instance_uuid}).first()
        if row is None:
            raise exception.BuildRequestNotFound(uuid=instance_uuid)
        return cls._from_db_object(context, row)

    def create(self, session=None) -> None:
        """Insert the row, in ``session``'s transaction when one is given."""
        self.id = base.insert_row(models.BuildRequest, {
            'instance_uuid': self.instance_uuid, 'project_id': self.project_id,
            'user_id': self.user_id, 'instance': base.obj_to_json(self.instance),
            'tags': base.to_json(self.tags if self.obj_attr_is_set('tags') else [])},
            session)
        self.obj_reset_changes()

    def save(self) -> None:
        """Write the (changed) instance and tags; ``BuildRequestNotFound`` if the
        conductor took the build request meanwhile."""
        with engine.api_writer() as session:
            row = session.scalars(select(models.BuildRequest)
                                  .filter_by(instance_uuid=self.instance_uuid)).first()
            if row is None:
                raise exception.BuildRequestNotFound(uuid=self.instance_uuid)
            row.instance = base.obj_to_json(self.instance)
            row.tags = base.to_json(self.tags if self.obj_attr_is_set('tags') else [])
        self.obj_reset_changes()

    def destroy(self) -> None:
        """Delete the row; ``BuildRequestNotFound`` if it was already gone.

        One DELETE, without reading the row first: the conductor deletes one for every
        server it places, and the row holds the whole instance.
        """
        with engine.api_writer() as session:
            result = session.connection().execute(_statements().delete,
                                                  {'uuid': self.instance_uuid})
        if result.rowcount == 0:
            raise exception.BuildRequestNotFound(uuid=self.instance_uuid)


@base.NovaliteObjectRegistry.register
class BuildRequestList(base.ObjectListBase, base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('BuildRequest')}

    @classmethod
    def get_all(cls, context, project_id: str | None = None) -> BuildRequestList:
        reads = _statements()
        with engine.api_connection() as connection:
            if project_id is None:
                rows = connection.execute(reads.all).all()
            else:
                rows = connection.execute(reads.by_project, {'project_id': project_id}).all()
        return cls(context, objects=[BuildRequest._from_db_object(context, r)
                                     for r in rows])
