"""Migration: one move of an instance between hosts (cell database).

Resize, cold and live migration and evacuation each leave a row; the os-migrations
API lists them, and a compute service cannot be deleted while one involving its host
is still under way.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from oslo_utils import timeutils, uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import and_, or_, select
from novalite.db.lazy import main_models as models
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy import Select

# Statuses after which a migration no longer holds anything on its hosts (Nova's list).
FINISHED_STATUSES = ('confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled',
                     'done')
# Statuses of a live migration still under way (the ones /servers/{id}/migrations shows).
LIVE_IN_PROGRESS = ('queued', 'preparing', 'running', 'post-migrating')

MIGRATION_TYPES = ('migration', 'resize', 'live-migration', 'evacuation')


@base.NovaliteObjectRegistry.register
class Migration(base.NovalitePersistentObject, base.NovaliteObject):
    # 1.1: the live migration's progress counters
    VERSION = '1.1'
    id: int
    uuid: str
    source_compute: str | None
    dest_compute: str | None
    source_node: str | None
    dest_node: str | None
    dest_host: str | None
    old_instance_type_id: int | None
    new_instance_type_id: int | None
    instance_uuid: str | None
    status: str | None
    migration_type: str | None
    hidden: bool
    cross_cell_move: bool
    user_id: str | None
    project_id: str | None
    memory_total: int | None
    memory_processed: int | None
    memory_remaining: int | None
    disk_total: int | None
    disk_processed: int | None
    disk_remaining: int | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'source_compute': fields.StringField(nullable=True),
        'dest_compute': fields.StringField(nullable=True),
        'source_node': fields.StringField(nullable=True),
        'dest_node': fields.StringField(nullable=True),
        'dest_host': fields.StringField(nullable=True),
        'old_instance_type_id': fields.IntegerField(nullable=True),
        'new_instance_type_id': fields.IntegerField(nullable=True),
        'instance_uuid': fields.StringField(nullable=True),
        'status': fields.StringField(nullable=True),
        'migration_type': fields.StringField(nullable=True),
        'hidden': fields.BooleanField(default=False),
        'cross_cell_move': fields.BooleanField(default=False),
        'user_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        # A live migration's progress in bytes (null until its driver reports).
        'memory_total': fields.IntegerField(nullable=True),
        'memory_processed': fields.IntegerField(nullable=True),
        'memory_remaining': fields.IntegerField(nullable=True),
        'disk_total': fields.IntegerField(nullable=True),
        'disk_processed': fields.IntegerField(nullable=True),
        'disk_remaining': fields.IntegerField(nullable=True),
    }

    @property
    def in_progress(self) -> bool:
        return self.status not in FINISHED_STATUSES

    @classmethod
    @base.remotable
    def get_by_id(cls, context: RequestContext, migration_id: int) -> Migration:
        with engine.cell_reader(context) as session:
            row = session.get(models.Migration, migration_id)
            if row is None or row.deleted:
                raise exception.MigrationNotFound(migration_id=migration_id)
            return cls._from_db_object(context, row)

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context: RequestContext, migration_uuid: str) -> Migration:
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.Migration)
                                  .filter_by(uuid=migration_uuid, deleted=0)).first()
            if row is None:
                raise exception.MigrationNotFound(migration_id=migration_uuid)
            return cls._from_db_object(context, row)

    @classmethod
    @base.remotable
    def get_by_instance_and_status(cls, context: RequestContext, instance_uuid: str,
                                   status: str) -> Migration:
        """The newest migration of the instance in ``status``.

        :raises MigrationNotFoundByStatus: there is none
        """
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.Migration).filter_by(
                instance_uuid=instance_uuid, status=status, deleted=0)
                .order_by(models.Migration.id.desc())).first()
            if row is None:
                raise exception.MigrationNotFoundByStatus(instance_id=instance_uuid,
                                                          status=status)
            return cls._from_db_object(context, row)

    def _values(self) -> dict:
        values = self.obj_get_changes()
        values.pop('deleted', None)
        for key in ('created_at', 'updated_at', 'deleted_at'):
            if key in values:
                values[key] = base.naive_utc(values[key])
        return values

    @base.remotable
    def create(self) -> None:
        values = self._values()
        values.setdefault('uuid', uuidutils.generate_uuid())
        self._insert_in_cell(models.Migration, values)

    @base.remotable
    def save(self) -> None:
        values = self._values()
        if not values:
            return
        with engine.cell_writer(self._context) as session:
            row = session.get(models.Migration, self.id)
            if row is None or row.deleted:
                raise exception.MigrationNotFound(migration_id=self.id)
            for key, value in values.items():
                setattr(row, key, value)
            session.flush()
            self._set_from_db(self, row, skip=('deleted',))
        self.obj_reset_changes()


def _filtered(query: Select[Any], filters: dict) -> Select[Any]:
    """Nova's migration filters: ``host`` and ``node`` match either end of the move."""
    table = models.Migration
    if filters.get('status') is not None:
        status = filters['status']
        query = query.where(table.status.in_(status if isinstance(status, (list, tuple))
                                             else [status]))
    if filters.get('host') is not None:
        query = query.where(or_(table.source_compute == filters['host'],
                                table.dest_compute == filters['host']))
    if filters.get('node') is not None:
        query = query.where(or_(table.source_node == filters['node'],
                                table.dest_node == filters['node']))
    for key in ('source_compute', 'migration_type', 'instance_uuid', 'user_id',
                'project_id'):
        if filters.get(key) is not None:
            query = query.where(getattr(table, key) == filters[key])
    if filters.get('hidden') is not None:
        query = query.where(table.hidden == bool(filters['hidden']))
    if filters.get('changes-since') is not None:
        query = query.where(table.updated_at >= base.naive_utc(filters['changes-since']))
    if filters.get('changes-before') is not None:
        query = query.where(table.updated_at <= base.naive_utc(filters['changes-before']))
    return query


@base.NovaliteObjectRegistry.register
class MigrationList(base.ObjectListBase['Migration'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Migration')}

    @classmethod
    def _get(cls, context: RequestContext, query: Select[Any]) -> MigrationList:
        with engine.cell_reader(context) as session:
            return cls(context, objects=[Migration._from_db_object(context, r)
                                         for r in session.scalars(query)])

    @classmethod
    @base.remotable
    def get_by_filters(cls, context: RequestContext, filters: dict, limit: int | None = None,
                       after: tuple | None = None, newest_first: bool = False
                       ) -> MigrationList:
        """The migrations of this cell matching ``filters``.

        :param newest_first: sort by (created_at, id) descending, else by id
        :param after: (created_at, id) of a marker: only rows that sort after it
        """
        table = models.Migration
        query = _filtered(select(table).where(table.deleted == 0), filters)
        if newest_first:
            if after is not None:
                created, row_id = base.naive_utc(after[0]), after[1]
                query = query.where(or_(table.created_at < created,
                                        and_(table.created_at == created, table.id < row_id)))
            query = query.order_by(table.created_at.desc(), table.id.desc())
        else:
            query = query.order_by(table.id)
        if limit is not None:
            query = query.limit(limit)
        return cls._get(context, query)

    @classmethod
    @base.remotable
    def get_in_progress_by_host_and_node(cls, context: RequestContext, host: str, node: str
                                         ) -> MigrationList:
        """Unfinished migrations to or from ``host``/``node``."""
        table = models.Migration
        return cls._get(context, select(table).where(
            table.deleted == 0, table.status.not_in(FINISHED_STATUSES),
            or_(and_(table.source_compute == host, table.source_node == node),
                and_(table.dest_compute == host, table.dest_node == node))))

    @classmethod
    @base.remotable
    def get_in_progress_by_instance(cls, context: RequestContext, instance_uuid: str,
                                    migration_type: str | None = None) -> MigrationList:
        table = models.Migration
        query = select(table).where(table.deleted == 0, table.instance_uuid == instance_uuid,
                                    table.status.not_in(FINISHED_STATUSES))
        if migration_type is not None:
            query = query.where(table.migration_type == migration_type)
        return cls._get(context, query.order_by(table.id))


    @classmethod
    @base.remotable
    def get_unconfirmed_by_dest_compute(cls, context: RequestContext, confirm_window: int,
                                        dest_compute: str) -> MigrationList:
        """Resizes to ``dest_compute`` waiting in VERIFY_RESIZE (status ``finished``)
        for more than ``confirm_window`` seconds."""
        limit = timeutils.utcnow() - datetime.timedelta(seconds=confirm_window)
        table = models.Migration
        return cls._get(context, select(table).where(
            table.deleted == 0, table.status == 'finished',
            table.dest_compute == dest_compute, table.updated_at <= limit))

    @classmethod
    @base.remotable
    def get_evacuations_from_host(cls, context: RequestContext, host: str) -> MigrationList:
        """Evacuations away from ``host`` that it has not cleaned up after yet (it was
        down when they ran)."""
        table = models.Migration
        return cls._get(context, select(table).where(
            table.deleted == 0, table.source_compute == host,
            table.migration_type == 'evacuation',
            table.status.in_(('accepted', 'pre-migrating', 'rebuilding', 'done'))))
