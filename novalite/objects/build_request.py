"""BuildRequest: a server that is not yet in a cell (API database).

It holds the whole Instance object, serialized, so that the API can show and list the
server while the conductor is still scheduling it.
"""
from __future__ import annotations

import datetime
import enum
import functools
import types
from typing import TYPE_CHECKING, Any

from oslo_utils import timeutils, versionutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
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
        delete=sa.delete(table).where(table.c.instance_uuid == sa.bindparam('uuid')),
        # The conductor's build of a given attempt, unless its user deleted it.
        current=sa.and_(table.c.instance_uuid == sa.bindparam('uuid'),
                        table.c.attempt == sa.bindparam('b_attempt'),
                        table.c.delete_requested == sa.false()))


class Ownership(enum.Enum):
    """Whether a conductor's build of a build request still counts."""

    CURRENT = 'current'
    DELETE_REQUESTED = 'delete requested'  # its user deleted it: the conductor cleans up
    STALE = 'stale'  # it was re-driven: another attempt owns it now
    GONE = 'gone'


if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Row
    from sqlalchemy.orm import Session

    from novalite import objects


@base.NovaliteObjectRegistry.register
class BuildRequest(base.NovaliteTimestampObject, base.NovaliteObject):
    """A server not yet in a cell.

    A conductor *takes* it (one ``attempt``) before it schedules; when that conductor
    died or its message was lost, the lost-build check *re-drives* it as the next
    attempt, and the old attempt's conductor, if it was only slow, finds itself
    ``STALE`` and lets go. A delete while a conductor holds it is only *requested*:
    that conductor frees what it claimed and removes it, so that the server answers
    404 only once nothing of it is left in Placement.
    """

    # 1.0: initial
    # 1.1: attempt, taken_at, delete_requested
    # 1.2: block_device_mappings
    VERSION = '1.2'
    id: int
    instance_uuid: str
    project_id: str
    user_id: str | None
    instance: objects.Instance
    tags: list[str]
    attempt: int
    taken_at: datetime.datetime | None
    delete_requested: bool
    block_device_mappings: list[objects.BlockDeviceMapping]

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'instance_uuid': fields.UUIDField(),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(nullable=True),
        'instance': fields.ObjectField('Instance'),
        'tags': fields.ListOfStringsField(default=[]),
        'attempt': fields.IntegerField(default=0),
        'taken_at': fields.DateTimeField(nullable=True),
        'delete_requested': fields.BooleanField(default=False),
        # The create's block device mappings, made in the instance's cell with it
        # (kept as their ``to_request()`` dicts).
        'block_device_mappings': fields.ListOfObjectsField('BlockDeviceMapping', default=[]),
    }

    def obj_make_compatible(self, primitive: dict, target_version: str) -> None:
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            for name in ('attempt', 'taken_at', 'delete_requested'):
                primitive.pop(name, None)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            primitive.pop('block_device_mappings', None)

    @classmethod
    def _from_db_object(cls, context: RequestContext,
                        row: Row[Any] | types.SimpleNamespace) -> BuildRequest:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('instance', 'tags', 'block_device_mappings'))
        obj.instance = _instances(row.instance)
        obj.instance._context = context
        obj.tags = base.from_json(row.tags, [])
        # A read of a few columns (``InstanceMapping``'s locate) leaves them out.
        if hasattr(row, 'block_device_mappings'):
            from novalite.objects.block_device import BlockDeviceMapping
            obj.block_device_mappings = [
                BlockDeviceMapping.from_request(context, values)
                for values in base.from_json(row.block_device_mappings, [])]
        obj.obj_reset_changes()
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str) -> BuildRequest:
        with engine.api_connection() as connection:
            row = connection.execute(_statements().by_uuid, {'uuid': instance_uuid}).first()
        if row is None:
            raise exception.BuildRequestNotFound(uuid=instance_uuid)
        return cls._from_db_object(context, row)

    def create(self, session: Session | None = None) -> None:
        """Insert the row, in ``session``'s transaction when one is given."""
        self.id = base.insert_row(models.BuildRequest, {
            'instance_uuid': self.instance_uuid, 'project_id': self.project_id,
            'user_id': self.user_id, 'instance': base.obj_to_json(self.instance),
            'tags': base.to_json(self.tags if self.obj_attr_is_set('tags') else []),
            'block_device_mappings': base.to_json([m.to_request() for m in self.mappings()])
            if self.mappings() else None},
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

    def mappings(self) -> list[objects.BlockDeviceMapping]:
        """The create's block device mappings (none for a plain image boot)."""
        return self.block_device_mappings if self.obj_attr_is_set('block_device_mappings') \
            else []

    def _attempt(self) -> int:
        return self.attempt if self.obj_attr_is_set('attempt') else 0

    def _why_not_current(self, connection: Connection) -> Ownership:
        row = connection.execute(_statements().by_uuid, {'uuid': self.instance_uuid}).first()
        if row is None:
            return Ownership.GONE
        if row.delete_requested:
            return Ownership.DELETE_REQUESTED
        return Ownership.STALE

    def take(self) -> Ownership:
        """Take this attempt's build (or renew the lease on it): ``CURRENT`` if it is
        ours to build, else why not."""
        from novalite.db.api import models as m
        table = m.BuildRequest.__table__
        now = timeutils.utcnow()
        with engine.api_writer() as session:
            connection = session.connection()
            result = connection.execute(
                table.update().where(_statements().current).values(taken_at=now),
                {'uuid': self.instance_uuid, 'b_attempt': self._attempt()})
            if result.rowcount:
                self.taken_at = now.replace(tzinfo=datetime.UTC)
                return Ownership.CURRENT
            return self._why_not_current(connection)

    def destroy_if_current(self) -> Ownership:
        """Delete the row if this attempt still owns it (the build reached its cell)."""
        from novalite.db.api import models as m
        table = m.BuildRequest.__table__
        with engine.api_writer() as session:
            connection = session.connection()
            result = connection.execute(table.delete().where(_statements().current),
                                        {'uuid': self.instance_uuid,
                                         'b_attempt': self._attempt()})
            if result.rowcount:
                return Ownership.CURRENT
            return self._why_not_current(connection)

    def redrive(self) -> bool:
        """Make this the next attempt, not yet taken; False if someone else did, or
        the row is gone."""
        from novalite.db.api import models as m
        table = m.BuildRequest.__table__
        with engine.api_writer() as session:
            result = session.connection().execute(
                table.update().where(table.c.instance_uuid == self.instance_uuid,
                                     table.c.attempt == self._attempt())
                .values(attempt=table.c.attempt + 1, taken_at=None,
                        updated_at=timeutils.utcnow()))
        if not result.rowcount:
            return False
        self.attempt = self._attempt() + 1
        self.taken_at = None
        return True

    @classmethod
    def delete_or_request(cls, context: RequestContext, instance_uuid: str) -> bool:
        """The API's delete of a server still being scheduled: True if the row was
        deleted (no conductor had taken it, so nothing was claimed for it), False if a
        conductor holds it and was asked to finish the delete.

        :raises BuildRequestNotFound: the server is no longer a build request.
        """
        from novalite.db.api import models as m
        table = m.BuildRequest.__table__
        with engine.api_writer() as session:
            connection = session.connection()
            result = connection.execute(table.delete().where(
                table.c.instance_uuid == instance_uuid, table.c.taken_at.is_(None)))
            if result.rowcount:
                return True
            result = connection.execute(
                table.update().where(table.c.instance_uuid == instance_uuid)
                .values(delete_requested=True))
        if not result.rowcount:
            raise exception.BuildRequestNotFound(uuid=instance_uuid)
        return False

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
class BuildRequestList(base.ObjectListBase['BuildRequest'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('BuildRequest')}

    @classmethod
    def get_all(cls, context: RequestContext, project_id: str | None = None) -> BuildRequestList:
        reads = _statements()
        with engine.api_connection() as connection:
            if project_id is None:
                rows = connection.execute(reads.all).all()
            else:
                rows = connection.execute(reads.by_project, {'project_id': project_id}).all()
        return cls(context, objects=[BuildRequest._from_db_object(context, r)
                                     for r in rows])
