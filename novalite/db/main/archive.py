"""Archive and purge of soft-deleted rows: the work of ``novalite-manage db
archive_deleted_rows`` and ``db purge`` (as Nova's ``archive_deleted_rows`` and
``purge_shadow_tables``).

Archiving moves rows to their shadow tables (``models.SHADOW_TABLES``), a batch per
transaction: first deleted instances with every row that depends on them (children
before their parent, whatever their own ``deleted`` says), then the rows soft-deleted on
their own (a metadata key, a detached volume, a service). Tags and console tokens of an
archived instance have no shadow: they are deleted. The API database's rows of archived
instances follow in ``archive_api_rows``: their mappings go to shadow_instance_mappings
(beyond Nova, which deletes them), their request specs and group memberships are deleted.
Live rows (``deleted == 0``) are never touched.
"""
from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterator, Sequence

from sqlalchemy import ColumnElement, Connection, Table, and_, func, select

from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models

# IN lists are sent in chunks: old SQLite builds refuse more than 999 parameters.
_CHUNK = 500

_INSTANCES = models.Instance.__table__
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
# Rows that name an instance by instance_uuid and move with it (events go with their
# action, before it).
_INSTANCE_CHILDREN = tuple(model.__table__ for model in (
    models.InstanceExtra, models.InstanceInfoCache, models.InstanceMetadata,
    models.InstanceSystemMetadata, models.InstanceFault, models.InstanceAction,
    models.BlockDeviceMapping, models.Migration))
# Tables whose rows are soft-deleted on their own too, children before parents.
_ON_THEIR_OWN = tuple(model.__table__ for model in (
    models.InstanceExtra, models.InstanceInfoCache, models.InstanceMetadata,
    models.InstanceSystemMetadata, models.InstanceFault, models.InstanceActionEvent,
    models.InstanceAction, models.BlockDeviceMapping, models.Migration,
    models.ComputeNode, models.Service))
_TASK_LOG = models.TaskLog.__table__

API_PREFIX = 'API_DB.'


@dataclasses.dataclass
class Batch:
    """What one batch archived in one cell."""
    rows: dict[str, int] = dataclasses.field(default_factory=dict)
    # The archived instances' uuids and when each was deleted.
    instances: dict[str, datetime.datetime | None] = dataclasses.field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    def count(self, table: str, rows: int) -> None:
        if rows:
            self.rows[table] = self.rows.get(table, 0) + rows


def _chunks(values: Sequence[object]) -> Iterator[Sequence[object]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start:start + _CHUNK]


def _move(conn: Connection, table: Table, ids: Sequence[object]) -> int:
    """Copy the rows of ``table`` with these ids to its shadow, then delete them.

    The copy reads the rows FOR UPDATE (ignored by SQLite, whose transaction holds the
    write lock), so an update cannot land between the copy and the delete and be lost.
    """
    shadow = models.SHADOW_TABLES[table.name]
    names = [column.name for column in table.columns]
    moved = 0
    for chunk in _chunks(ids):
        rows = select(*table.columns).where(table.c.id.in_(chunk)).with_for_update()
        conn.execute(shadow.insert().from_select(names, rows))
        moved += conn.execute(table.delete().where(table.c.id.in_(chunk))).rowcount
    return moved


def _move_where(conn: Connection, batch: Batch, table: Table,
                where: ColumnElement[bool]) -> None:
    batch.count(table.name, _move(conn, table, _ids(conn, table, where)))


def _move_events(conn: Connection, batch: Batch, action_ids: Sequence[int]) -> None:
    """Events go to the shadow before their action: they name it."""
    for chunk in _chunks(action_ids):
        _move_where(conn, batch, _EVENTS, _EVENTS.c.action_id.in_(chunk))


def _ids(conn: Connection, table: Table, where: ColumnElement[bool],
         limit: int | None = None) -> list[int]:
    query = select(table.c.id).where(where).order_by(table.c.id)
    if limit is not None:
        query = query.limit(limit)
    return list(conn.scalars(query))


def _deleted(table: Table, before: datetime.datetime | None) -> ColumnElement[bool]:
    where = table.c.deleted != 0
    if before is not None:
        where = and_(where, table.c.deleted_at < before)
    return where


def _by_instance(table: Table, uuids: Sequence[object]) -> ColumnElement[bool]:
    return table.c.instance_uuid.in_(uuids)


def _archive_instances(conn: Connection, batch: Batch, limit: int,
                       before: datetime.datetime | None) -> None:
    """Archive up to ``limit`` deleted instances with their dependent rows."""
    found = conn.execute(
        select(_INSTANCES.c.id, _INSTANCES.c.uuid, _INSTANCES.c.deleted_at)
        .where(_deleted(_INSTANCES, before)).order_by(_INSTANCES.c.id).limit(limit)).all()
    if not found:
        return
    uuids = [row.uuid for row in found]
    for chunk in _chunks(uuids):
        _move_events(conn, batch, _ids(conn, _ACTIONS, _by_instance(_ACTIONS, chunk)))
        for table in _INSTANCE_CHILDREN:
            _move_where(conn, batch, table, _by_instance(table, chunk))
        conn.execute(models.Tag.__table__.delete().where(
            models.Tag.__table__.c.resource_id.in_(chunk)))
        tokens = models.ConsoleAuthToken.__table__
        conn.execute(tokens.delete().where(_by_instance(tokens, chunk)))
    batch.count(_INSTANCES.name, _move(conn, _INSTANCES, [row.id for row in found]))
    batch.instances.update((row.uuid, row.deleted_at) for row in found)


def _archive_table(conn: Connection, batch: Batch, table: Table, limit: int,
                   before: datetime.datetime | None) -> None:
    """Archive up to ``limit`` rows of ``table`` soft-deleted on their own."""
    ids = _ids(conn, table, _deleted(table, before), limit)
    if table is _ACTIONS:
        _move_events(conn, batch, ids)
    batch.count(table.name, _move(conn, table, ids))


def _archive_task_log(conn: Connection, batch: Batch, limit: int,
                      before: datetime.datetime | None) -> None:
    """task_log rows are never soft-deleted: archive those whose period ended before
    ``before`` (all without it), as Nova's ``--task-log``."""
    where = (_TASK_LOG.c.id.is_not(None) if before is None
             else _TASK_LOG.c.period_ending < before)
    batch.count(_TASK_LOG.name, _move(conn, _TASK_LOG, _ids(conn, _TASK_LOG, where, limit)))


def archive_batch(url: str, max_rows: int, before: datetime.datetime | None = None,
                  task_log: bool = False) -> Batch:
    """Archive one batch of the cell database at ``url``, in one transaction.

    ``max_rows`` bounds the rows selected; an instance's dependent rows always move with
    it, so the batch may pass it (a soft limit, as Nova's).
    """
    batch = Batch()
    with engine.get_engine(url).begin() as conn:
        _archive_instances(conn, batch, max_rows, before)
        for table in _ON_THEIR_OWN:
            if batch.total >= max_rows:
                break
            _archive_table(conn, batch, table, max_rows - batch.total, before)
        if task_log and batch.total < max_rows:
            _archive_task_log(conn, batch, max_rows - batch.total, before)
    return batch


def archive_api_rows(instances: dict[str, datetime.datetime | None]) -> dict[str, int]:
    """Move the API database's mappings of archived instances to shadow_instance_mappings
    and delete their request specs and instance group memberships, in one transaction.
    Returns {API_DB.<table>: rows}."""
    mappings = api_models.InstanceMapping.__table__
    shadow = api_models.shadow_instance_mappings
    specs = api_models.RequestSpec.__table__
    members = api_models.InstanceGroupMember.__table__
    counts = {API_PREFIX + mappings.name: 0, API_PREFIX + specs.name: 0,
              API_PREFIX + members.name: 0}
    uuids = list(instances)
    with engine.get_engine(engine.api_url()).begin() as conn:
        for chunk in _chunks(uuids):
            rows = conn.execute(select(mappings).where(mappings.c.instance_uuid.in_(chunk))
                                .with_for_update()).mappings().all()
            if rows:
                conn.execute(shadow.insert(), [
                    {**row, 'deleted_at': instances[row['instance_uuid']]} for row in rows])
                counts[API_PREFIX + mappings.name] += conn.execute(mappings.delete().where(
                    mappings.c.id.in_([row['id'] for row in rows]))).rowcount
            counts[API_PREFIX + specs.name] += conn.execute(
                specs.delete().where(specs.c.instance_uuid.in_(chunk))).rowcount
            counts[API_PREFIX + members.name] += conn.execute(
                members.delete().where(members.c.instance_uuid.in_(chunk))).rowcount
    return counts


def _older(table: Table, before: datetime.datetime) -> ColumnElement[bool]:
    """A shadow row is older than ``before`` by its deleted_at; one that moved with its
    instance without being soft-deleted itself (an action, an event) by its last change."""
    if table.name == models.SHADOW_PREFIX + _TASK_LOG.name:
        return table.c.period_ending < before
    return func.coalesce(table.c.deleted_at, table.c.updated_at, table.c.created_at) < before


def purge_shadow_tables(url: str, before: datetime.datetime | None,
                        status: Callable[[str], None]) -> int:
    """Delete the shadow rows of the cell database at ``url`` (those older than
    ``before``, or all); returns how many."""
    deleted = 0
    with engine.get_engine(url).begin() as conn:
        for table in models.SHADOW_TABLES.values():
            statement = table.delete()
            if before is not None:
                statement = statement.where(_older(table, before))
            rows = conn.execute(statement).rowcount
            if rows:
                status('Deleted %i rows from %s' % (rows, table.name))
            deleted += rows
    return deleted


def purge_shadow_mappings(cell_ids: Sequence[int], before: datetime.datetime | None,
                          status: Callable[[str], None]) -> int:
    """Delete the archived instance mappings of these cells (older than ``before``)."""
    shadow = api_models.shadow_instance_mappings
    where: ColumnElement[bool] = shadow.c.cell_id.in_(cell_ids)
    if before is not None:
        where = and_(where, shadow.c.deleted_at < before)
    with engine.get_engine(engine.api_url()).begin() as conn:
        rows = conn.execute(shadow.delete().where(where)).rowcount
    if rows:
        status('Deleted %i rows from %s%s' % (rows, API_PREFIX, shadow.name))
    return rows
