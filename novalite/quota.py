"""Quotas by counting: usage is counted from the databases, never reserved.

Limits come from, in order: per-user rows (``project_user_quotas``), per-project rows
(``quotas``), the ``default`` quota class (``quota_classes``), then ``[quota]`` options.
Usage of instances, cores and ram is counted in every cell plus the build requests
not yet in a cell, each server once; key pairs and server groups in the API database.

Concurrent creates of one project count and insert one at a time (``project_lock``): a
row per project in the API database, locked by the create that counts, so that the
servers it admits are written before the next create counts them. M creates where N
fit get N servers and M - N answers of 403, not M accepted builds that a later check
fails. The conductor still checks again after creating the instances, for a limit
lowered meanwhile.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from oslo_concurrency import lockutils
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from sqlalchemy import (
    bindparam,
    delete,
    func,
    literal_column,
    or_,
    select,
    union_all,
    update,
)

from novalite import exception
from novalite.compute import task_states
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models

if TYPE_CHECKING:
    from sqlalchemy import CompoundSelect, Select
    from sqlalchemy.engine import CursorResult, Row
    from sqlalchemy.orm import Session

    from novalite.context import RequestContext

    # The instances, cores and ram of a cell's counted servers.
    _UsageQuery = Select[int, int | None, int | None]

COUNTED = ('instances', 'cores', 'ram')
DEFAULT_CLASS = 'default'

# Every resource with a limit and the [quota] option of its default. None: nova-network
# quotas, always -1, kept only because microversions before 2.36 still report them.
RESOURCES: dict[str, str | None] = {
    'instances': 'instances',
    'cores': 'cores',
    'ram': 'ram',
    'metadata_items': 'metadata_items',
    'injected_files': 'injected_files',
    'injected_file_content_bytes': 'injected_file_content_bytes',
    'injected_file_path_bytes': 'injected_file_path_length',
    'key_pairs': 'key_pairs',
    'server_groups': 'server_groups',
    'server_group_members': 'server_group_members',
    'fixed_ips': None,
    'floating_ips': None,
    'security_groups': None,
    'security_group_rules': None,
}
NETWORK_RESOURCES = ('fixed_ips', 'floating_ips', 'security_groups', 'security_group_rules')
INJECTED_FILE_RESOURCES = ('injected_files', 'injected_file_content_bytes',
                           'injected_file_path_bytes')


def defaults() -> dict[str, int]:
    """The limits of the ``[quota]`` options alone."""
    return {name: -1 if opt is None else getattr(CONF.quota, opt)
            for name, opt in RESOURCES.items()}


def _overlay(limits: dict[str, int], rows: Iterable[Row[Any] | api_models.Quota]) -> dict[str, int]:
    for row in rows:
        if row.resource in limits and row.hard_limit is not None:
            limits[row.resource] = row.hard_limit
    return limits


def get_class_limits(quota_class: str = DEFAULT_CLASS) -> dict[str, int]:
    """A quota class's limits: its rows over the ``[quota]`` options."""
    with engine.api_reader() as session:
        return _overlay(defaults(), session.scalars(
            select(api_models.QuotaClass).filter_by(class_name=quota_class)))


def get_project_limits(project_id: str | None, user_id: str | None = None) -> dict[str, int]:
    """The limits shown for a project, or for one of its users (a user row wins)."""
    limits = get_class_limits()
    with engine.api_reader() as session:
        _overlay(limits, session.scalars(select(api_models.Quota)
                                         .filter_by(project_id=project_id)))
        if user_id:
            _overlay(limits, session.scalars(select(api_models.ProjectUserQuota)
                                             .filter_by(project_id=project_id,
                                                        user_id=user_id)))
    return limits


@functools.cache
def _limits_query(with_user: bool) -> CompoundSelect:
    """The class, project and (``with_user``) user rows in one query, built once: every
    create asks, in the API and again in the conductor."""
    qc, q, pu = (model.__table__ for model in (
        api_models.QuotaClass, api_models.Quota, api_models.ProjectUserQuota))
    parts = [select(literal_column('0').label('kind'), qc.c.resource, qc.c.hard_limit)
             .where(qc.c.class_name == DEFAULT_CLASS),
             select(literal_column('1').label('kind'), q.c.resource, q.c.hard_limit)
             .where(q.c.project_id == bindparam('project_id'))]
    if with_user:
        parts.append(select(literal_column('2').label('kind'), pu.c.resource,
                            pu.c.hard_limit)
                     .where(pu.c.project_id == bindparam('project_id'),
                            pu.c.user_id == bindparam('user_id')))
    return union_all(*parts)


def get_limits(context: RequestContext, project_id: str | None,
               user_id: str | None = None) -> dict[str, int]:
    """The limits a request of ``user_id`` is checked against: the project's, capped by
    the user's own where one is set (usage is counted per project)."""
    with engine.api_connection() as connection:
        rows = connection.execute(_limits_query(bool(user_id)),
                                  {'project_id': project_id, 'user_id': user_id}).all()
    limits = defaults()
    for kind in (0, 1):
        _overlay(limits, (row for row in rows if row.kind == kind))
    for row in rows:
        if row.kind == 2 and row.resource in limits and row.hard_limit is not None:
            limits[row.resource] = min(limits[row.resource], row.hard_limit) \
                if limits[row.resource] >= 0 else row.hard_limit
    return limits


def set_limits(project_id: str, limits: dict[str, int], user_id: str | None = None) -> None:
    """Store project (or, with ``user_id``, per-user) limits; other resources untouched."""
    model: type[api_models.ProjectUserQuota | api_models.Quota] = (
        api_models.ProjectUserQuota if user_id else api_models.Quota)
    keys = {'project_id': project_id}
    if user_id:
        keys['user_id'] = user_id
    with engine.api_writer() as session:
        found: Sequence[api_models.ProjectUserQuota | api_models.Quota] = (
            session.scalars(select(api_models.ProjectUserQuota).filter_by(**keys)).all()
            if user_id else session.scalars(select(api_models.Quota).filter_by(**keys)).all())
        rows = {r.resource: r for r in found}
        for resource, hard_limit in limits.items():
            if resource in rows:
                rows[resource].hard_limit = hard_limit
            else:
                session.add(model(resource=resource, hard_limit=hard_limit, **keys))


def delete_limits(project_id: str, user_id: str | None = None) -> None:
    """Back to the defaults: a project's rows and all its users' rows, or one user's."""
    with engine.api_writer() as session:
        query = delete(api_models.ProjectUserQuota).where(
            api_models.ProjectUserQuota.project_id == project_id)
        if user_id:
            session.execute(query.where(api_models.ProjectUserQuota.user_id == user_id))
            return
        session.execute(query)
        session.execute(delete(api_models.Quota).where(
            api_models.Quota.project_id == project_id))


def set_class_limits(quota_class: str, limits: dict[str, int]) -> None:
    with engine.api_writer() as session:
        rows = {r.resource: r for r in session.scalars(
            select(api_models.QuotaClass).filter_by(class_name=quota_class))}
        for resource, hard_limit in limits.items():
            if resource in rows:
                rows[resource].hard_limit = hard_limit
            else:
                session.add(api_models.QuotaClass(class_name=quota_class, resource=resource,
                                                  hard_limit=hard_limit))


def _count_instances(context: RequestContext, project_id: str | None,
                     user_id: str | None) -> dict[str, int]:
    """instances, cores and ram of the project (or of one of its users), each server
    counted once.

    Build requests are read first, then the cells: the conductor creates an instance in
    its cell before it deletes the build request, so a server moving from one to the
    other is found in the first read, or in both (and counted once, as a build request),
    never in neither. A server being deleted (task state ``deleting``, or a build
    request whose delete its conductor is to finish) no longer counts: its place is free
    as soon as the delete is accepted.
    """
    from novalite import context as nl_context
    from novalite import objects
    usage = dict.fromkeys(COUNTED, 0)
    building: list[str] = []
    for build_request in objects.BuildRequestList.get_all(context, project_id=project_id):
        if user_id and build_request.user_id != user_id:
            continue
        instance = build_request.instance
        building.append(build_request.instance_uuid)
        if build_request.delete_requested:
            continue  # deleted while a conductor schedules it, which finishes the delete
        usage['instances'] += 1
        usage['cores'] += instance.vcpus or 0
        usage['ram'] += instance.memory_mb or 0
    query = _cell_usage_query(project_id, user_id, building)
    results = nl_context.scatter_gather_cells(
        context, list(objects.CellMappingList.get_all(context)), 30,
        lambda cctxt: _cell_usage(cctxt, query))
    for result in results.values():
        if not isinstance(result, tuple):
            raise exception.CellTimeout()
        for key, value in zip(COUNTED, result, strict=True):
            usage[key] += value
    return usage


def _cell_usage_query(project_id: str | None, user_id: str | None,
                      building: list[str]) -> _UsageQuery:
    instance = main_models.Instance
    query = select(func.count(instance.id), func.coalesce(func.sum(instance.vcpus), 0),
                   func.coalesce(func.sum(instance.memory_mb), 0)).where(
        instance.deleted == 0, instance.project_id == project_id,
        or_(instance.task_state.is_(None), instance.task_state != task_states.DELETING))
    if user_id:
        query = query.where(instance.user_id == user_id)
    if building:
        query = query.where(instance.uuid.not_in(building))
    return query


def _cell_usage(context: RequestContext, query: _UsageQuery) -> tuple[int, int, int]:
    with engine.cell_connection(context) as connection:
        count, cores, ram = connection.execute(query).one()
    return int(count), int(cores or 0), int(ram or 0)  # the sums are COALESCEd: never NULL


def count_usage(context: RequestContext, project_id: str | None) -> dict[str, int]:
    """instances, cores and ram the project uses in all cells and in build requests."""
    return _count_instances(context, project_id, None)


def count_server_groups(project_id: str | None, user_id: str | None = None) -> int:
    query = select(func.count(api_models.InstanceGroup.id)).filter_by(project_id=project_id)
    if user_id:
        query = query.filter_by(user_id=user_id)
    with engine.api_reader() as session:
        return session.scalar(query) or 0


def count_key_pairs(user_id: str) -> int:
    with engine.api_reader() as session:
        return session.scalar(select(func.count(api_models.KeyPair.id))
                              .filter_by(user_id=user_id)) or 0


def in_use(context: RequestContext, project_id: str | None,
           user_id: str | None = None) -> dict[str, int]:
    """Usage of every resource, of the project or of one of its users.

    Key pairs belong to users, so a project's count is 0; resources counted per server
    or per group (metadata items, group members) have no total and show 0, as in Nova.
    """
    usage = dict.fromkeys(RESOURCES, 0)
    usage.update(_count_instances(context, project_id, user_id))
    usage['server_groups'] = count_server_groups(project_id, user_id)
    if user_id:
        usage['key_pairs'] = count_key_pairs(user_id)
    return usage


def check_deltas(context: RequestContext, deltas: dict[str, int], project_id: str | None,
                 user_id: str | None = None) -> None:
    """Raise ``TooManyInstances`` (instances, cores, ram) or ``OverQuota`` (others) if
    adding ``deltas`` passes a limit."""
    headroom(context, deltas, project_id, user_id, raise_over=True)


def headroom(context: RequestContext, deltas: dict[str, int], project_id: str | None,
             user_id: str | None = None, raise_over: bool = False) -> dict[str, int]:
    """How much of each counted resource in ``deltas`` (always instances, cores, ram) is
    left (-1: unlimited); raise when ``deltas`` does not fit and ``raise_over``."""
    limits = get_limits(context, project_id, user_id)
    names = list(COUNTED) + [k for k in deltas if k not in COUNTED]
    if all(limits.get(k, -1) < 0 for k in names):
        return dict.fromkeys((k for k in names if k in limits), -1)  # nothing to count
    usage: dict[str, int] = dict.fromkeys(COUNTED, 0)
    if any(limits.get(k, -1) >= 0 for k in COUNTED):
        usage = count_usage(context, project_id)
    if 'server_groups' in deltas:
        usage['server_groups'] = count_server_groups(project_id)
    if 'key_pairs' in deltas and user_id:
        usage['key_pairs'] = count_key_pairs(user_id)
    left = {k: -1 if limits[k] < 0 else limits[k] - usage.get(k, 0)
            for k in names if k in limits}
    overs = sorted(k for k, v in deltas.items()
                   if k in limits and limits[k] >= 0 and usage.get(k, 0) + v > limits[k])
    if overs and raise_over:
        if set(overs) <= set(COUNTED):
            raise exception.TooManyInstances(
                overs=', '.join(overs), req=', '.join(str(deltas[k]) for k in overs),
                used=', '.join(str(usage[k]) for k in overs),
                allowed=', '.join(str(limits[k]) for k in overs))
        raise exception.OverQuota(overs=', '.join(overs))
    return left


# Projects whose quota_locks row is known to exist, so a create inserts it only once.
_LOCK_ROWS: set[str] = set()


def _ensure_lock_row(project_id: str) -> None:
    """Insert the project's row in a transaction of its own: locking a row that does not
    exist yet would take a gap lock on MariaDB, and two creates inserting it at once would
    deadlock."""
    if project_id in _LOCK_ROWS:
        return
    try:
        with engine.api_writer() as session:
            if session.get(api_models.QuotaLock, project_id) is None:
                session.add(api_models.QuotaLock(project_id=project_id))
    except db_exc.DBDuplicateEntry:
        pass  # another create inserted it first
    _LOCK_ROWS.add(project_id)


@contextlib.contextmanager
def project_lock(project_id: str) -> Iterator[Session]:
    """An API-database transaction in which no other create of ``project_id`` counts or
    inserts: count the project's usage and write the build requests inside it.

    Updating the project's ``quota_locks`` row locks it until the transaction ends (a row
    lock on MariaDB and PostgreSQL, the database's write lock on SQLite). A lock of this
    process is taken first, so its own creates wait in order rather than in the database
    (SQLite's busy handler polls, and a waiting one holds a pooled connection).
    Reads of the API database inside the block join the transaction (see
    ``engine.api_transaction``) and so see what the previous holder committed.
    """
    _ensure_lock_row(project_id)
    with lockutils.lock('quota-%s' % project_id), engine.api_transaction() as session:
        # An UPDATE's result is a CursorResult (the library's stub says Result).
        locked = cast('CursorResult[Any]', session.execute(
            update(api_models.QuotaLock).where(api_models.QuotaLock.project_id == project_id)
            .values(updated_at=timeutils.utcnow()))).rowcount
        if not locked and session.scalar(
                select(api_models.QuotaLock.project_id).with_for_update()
                .where(api_models.QuotaLock.project_id == project_id)) is None:
            # The row went (a database restored without it): insert it, which locks too.
            session.add(api_models.QuotaLock(project_id=project_id))
            session.flush()
        yield session
