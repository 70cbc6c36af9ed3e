"""Aggregate: a named set of compute hosts with metadata, availability zones too (API DB)."""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, cast

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import delete, select
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy.engine import CursorResult
    from sqlalchemy.orm import Session

    from novalite.db.api import models as db_models

AZ_KEY = 'availability_zone'


@base.NovaliteObjectRegistry.register
class Aggregate(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    name: str
    hosts: list[str]
    metadata: dict[str, str]

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'name': fields.StringField(),
        'hosts': fields.ListOfStringsField(default=[]),
        'metadata': fields.DictOfStringsField(default={}),
    }

    @property
    def availability_zone(self) -> str | None:
        return self.metadata.get(AZ_KEY)

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: db_models.Aggregate, hosts: list[str],
                        metadata: dict[str, str]) -> Aggregate:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('hosts', 'metadata'))
        obj.hosts = hosts
        obj.metadata = metadata
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _get_one(cls, context: RequestContext, **filters: int | str) -> Aggregate:
        with engine.api_reader() as session:
            row = session.scalars(select(models.Aggregate).filter_by(**filters)).first()
            if row is None:
                raise exception.AggregateNotFound(aggregate_id=next(iter(filters.values())))
            return _load(context, session, [row])[0]

    @classmethod
    def get_by_id(cls, context: RequestContext, aggregate_id: int) -> Aggregate:
        return cls._get_one(context, id=aggregate_id)

    @classmethod
    def get_by_uuid(cls, context: RequestContext, uuid: str) -> Aggregate:
        return cls._get_one(context, uuid=uuid)

    def create(self) -> None:
        """Insert the aggregate with its metadata (hosts are added one by one after)."""
        values = self.obj_get_changes()
        if 'id' in values:
            raise exception.ObjectActionError(action='create', reason='already created')
        if values.pop('hosts', None):
            raise exception.ObjectActionError(action='create',
                                              reason='hosts are added with add_host()')
        metadata = values.pop('metadata', {}) or {}
        values.setdefault('uuid', uuidutils.generate_uuid())
        with engine.api_writer() as session:
            if session.scalars(select(models.Aggregate.id)
                               .filter_by(name=values['name'])).first() is not None:
                raise exception.AggregateNameExists(aggregate_name=values['name'])
            row = models.Aggregate(**values)
            session.add(row)
            session.flush()
            for key, value in metadata.items():
                session.add(models.AggregateMetadata(aggregate_id=row.id, key=key,
                                                     value=value))
            self._set_from_db(self, row, skip=('hosts', 'metadata'))
        self.hosts = []
        self.metadata = dict(metadata)
        self.obj_reset_changes()

    def save(self) -> None:
        """Store a new name (hosts and metadata have their own methods)."""
        changes = self.obj_get_changes()
        if set(changes) - {'name'}:
            raise exception.ObjectActionError(
                action='save', reason='only the name is saved; hosts and metadata have '
                                      'add_host() and update_metadata()')
        if 'name' in changes:
            with engine.api_writer() as session:
                other = session.scalars(select(models.Aggregate.id).filter_by(
                    name=self.name)).first()
                if other is not None and other != self.id:
                    raise exception.AggregateNameExists(aggregate_name=self.name)
                row = session.get(models.Aggregate, self.id)
                if row is None:
                    raise exception.AggregateNotFound(aggregate_id=self.id)
                row.name = self.name
                session.flush()
                self.updated_at = row.updated_at
        self.obj_reset_changes()

    def add_host(self, host: str) -> None:
        with engine.api_writer() as session:
            if session.scalars(select(models.AggregateHost.id)
                               .filter_by(aggregate_id=self.id, host=host)).first():
                raise exception.AggregateHostExists(aggregate_id=self.id, host=host)
            session.add(models.AggregateHost(aggregate_id=self.id, host=host))
        self.hosts = list(self.hosts) + [host]
        self.obj_reset_changes(['hosts'])

    def delete_host(self, host: str) -> None:
        with engine.api_writer() as session:
            # A DELETE's result is a CursorResult (the library's stub says Result).
            result = cast('CursorResult[Any]', session.execute(delete(
                models.AggregateHost).where(models.AggregateHost.aggregate_id == self.id,
                                            models.AggregateHost.host == host)))
            if not result.rowcount:
                raise exception.AggregateHostNotFound(aggregate_id=self.id, host=host)
        self.hosts = [h for h in self.hosts if h != host]
        self.obj_reset_changes(['hosts'])

    def update_metadata(self, updates: dict[str, str | None]) -> None:
        """Set the keys of ``updates``; a None value removes its key."""
        with engine.api_writer() as session:
            rows = {r.key: r for r in session.scalars(
                select(models.AggregateMetadata).filter_by(aggregate_id=self.id))}
            for key, value in updates.items():
                row = rows.get(key)
                if value is None:
                    if row is not None:
                        session.delete(row)
                elif row is None:
                    session.add(models.AggregateMetadata(aggregate_id=self.id, key=key,
                                                         value=value))
                else:
                    row.value = value
        metadata = dict(self.metadata)
        for key, value in updates.items():
            if value is None:
                metadata.pop(key, None)
            else:
                metadata[key] = value
        self.metadata = metadata
        self.obj_reset_changes(['metadata'])

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.get(models.Aggregate, self.id)
            if row is None:
                raise exception.AggregateNotFound(aggregate_id=self.id)
            for table in (models.AggregateHost, models.AggregateMetadata):
                session.execute(delete(table).where(table.aggregate_id == row.id))
            session.delete(row)


def _load(context: RequestContext, session: Session,
          rows: list[db_models.Aggregate]) -> list[Aggregate]:
    """Aggregates of ``rows`` with their hosts and metadata: three queries in all."""
    ids = [r.id for r in rows]
    hosts: dict[int, list[str]] = defaultdict(list)
    for agg_id, host in session.execute(
            select(models.AggregateHost.aggregate_id, models.AggregateHost.host)
            .where(models.AggregateHost.aggregate_id.in_(ids))
            .order_by(models.AggregateHost.id)):
        hosts[agg_id].append(host)
    metadata: dict[int, dict[str, str]] = defaultdict(dict)
    for agg_id, key, value in session.execute(
            select(models.AggregateMetadata.aggregate_id, models.AggregateMetadata.key,
                   models.AggregateMetadata.value)
            .where(models.AggregateMetadata.aggregate_id.in_(ids))):
        metadata[agg_id][key] = value
    return [Aggregate._from_db_object(context, r, hosts[r.id], metadata[r.id])
            for r in rows]


@base.NovaliteObjectRegistry.register
class AggregateList(base.ObjectListBase['Aggregate'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Aggregate')}

    @classmethod
    def get_all(cls, context: RequestContext) -> AggregateList:
        with engine.api_reader() as session:
            rows = list(session.scalars(select(models.Aggregate)
                                        .order_by(models.Aggregate.id)))
            return cls(context, objects=_load(context, session, rows))

    @classmethod
    def get_by_host(cls, context: RequestContext, host: str,
                    key: str | None = None) -> AggregateList:
        """The aggregates ``host`` is in; only those having metadata ``key`` if given."""
        query = select(models.Aggregate).join(
            models.AggregateHost, models.AggregateHost.aggregate_id == models.Aggregate.id
        ).where(models.AggregateHost.host == host).order_by(models.Aggregate.id)
        if key is not None:
            query = query.where(models.Aggregate.id.in_(
                select(models.AggregateMetadata.aggregate_id)
                .where(models.AggregateMetadata.key == key)))
        with engine.api_reader() as session:
            rows = list(session.scalars(query))
            return cls(context, objects=_load(context, session, rows))

    @classmethod
    def get_by_hosts(cls, context: RequestContext, hosts: list[str]) -> dict[str, list[Aggregate]]:
        """Each of ``hosts`` with its aggregates (hosts in none map to []), in one pass."""
        by_host: dict[str, list[Aggregate]] = {h: [] for h in hosts}
        wanted = set(hosts)
        for aggregate in cls.get_all(context):
            for host in aggregate.hosts:
                if host in wanted:
                    by_host[host].append(aggregate)
        return by_host
