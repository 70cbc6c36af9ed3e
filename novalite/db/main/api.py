"""Queries on a cell database that are more than a lookup by key."""
from __future__ import annotations

import datetime
import types
from typing import TYPE_CHECKING

from oslo_db.sqlalchemy import utils as sqlalchemyutils
from sqlalchemy import func, or_, select
from sqlalchemy.orm import Query, Session

from novalite import exception
from novalite.db.main import models

if TYPE_CHECKING:
    from novalite.context import RequestContext

# Where a page starts: an instance uuid of this cell, or (for a marker that lives in
# another cell) an object carrying the sort keys' values.
Marker = str | types.SimpleNamespace | models.Instance

# Filters whose value is matched as a regular expression, as in Nova.
_REGEX_FILTERS = {'name': 'display_name', 'display_name': 'display_name',
                  'description': 'display_description', 'hostname': 'hostname',
                  'node': 'node', 'key_name': 'key_name', 'kernel_id': 'kernel_id',
                  'ramdisk_id': 'ramdisk_id', 'reservation_id': 'reservation_id',
                  'availability_zone': 'availability_zone', 'locked_by': 'locked_by',
                  'root_device_name': 'root_device_name', 'config_drive': 'config_drive',
                  'access_ip_v4': 'access_ip_v4', 'access_ip_v6': 'access_ip_v6'}
_EXACT_FILTERS = ('project_id', 'user_id', 'host', 'vm_state', 'task_state',
                  'image_ref', 'instance_type_id', 'locked', 'uuid', 'power_state',
                  'launch_index', 'progress')


def _aware(value: object) -> object:
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def instance_get_all(session: Session, context: RequestContext, filters: dict, sort_keys: list[str],
                     sort_dirs: list[str], limit: int | None,
                     marker: Marker | None) -> list[models.Instance]:
    """Instance rows (ORM objects) matching ``filters``; see ``instance_query``."""
    return instance_query(session, context, filters, sort_keys, sort_dirs, limit,
                          marker).all()


def instance_query(session: Session, context: RequestContext, filters: dict, sort_keys: list[str],
                   sort_dirs: list[str], limit: int | None,
                   marker: Marker | None) -> Query[models.Instance]:
    """The query of the instances matching ``filters``, sorted and paginated.

    ``filters`` keys: those of ``_EXACT_FILTERS`` (a list means any of), the regex
    filters (``name``), ``deleted`` (True, False or absent: absent means not deleted
    unless ``changes-since``/``changes-before`` is given), ``changes-since``,
    ``changes-before``, ``tags`` (all of), ``not-tags`` (not all of), ``tags-any`` (any
    of), ``not-tags-any`` (none of).
    ``marker`` is an instance uuid (unknown ones raise ``MarkerNotFound``) or an object
    carrying the sort keys' values, for a marker that lives in another cell.
    """
    query = session.query(models.Instance)
    changes_since = _aware(filters.get('changes-since'))
    changes_before = _aware(filters.get('changes-before'))
    if changes_since is not None:
        query = query.filter(models.Instance.updated_at >= changes_since)
    if changes_before is not None:
        query = query.filter(models.Instance.updated_at <= changes_before)
    deleted = filters.get('deleted')
    if deleted is None and changes_since is None and changes_before is None:
        deleted = False
    if deleted is True:
        query = query.filter(models.Instance.deleted != 0)
    elif deleted is False:
        query = query.filter(models.Instance.deleted == 0)
    for key in _EXACT_FILTERS:
        if key not in filters:
            continue
        value = filters[key]
        column = getattr(models.Instance, key)
        if isinstance(value, (list, tuple, set)):
            values = list(value)
            if None in values:
                query = query.filter(or_(column.is_(None),
                                         column.in_([v for v in values if v is not None])))
            else:
                query = query.filter(column.in_(values))
        else:
            query = query.filter(column.is_(None) if value is None else column == value)
    for key, column_name in _REGEX_FILTERS.items():
        if filters.get(key):
            column = getattr(models.Instance, column_name)
            query = query.filter(column.regexp_match(filters[key]))
    for tag in filters.get('tags') or []:
        query = query.filter(models.Instance.uuid.in_(
            select(models.Tag.resource_id).where(models.Tag.tag == tag)))
    not_tags = filters.get('not-tags') or []
    if not_tags:
        having_all = select(models.Tag.resource_id).where(models.Tag.tag.in_(not_tags)) \
            .group_by(models.Tag.resource_id)
        having_all = having_all.having(func.count(models.Tag.tag) == len(set(not_tags)))
        query = query.filter(models.Instance.uuid.not_in(having_all))
    if filters.get('tags-any'):
        query = query.filter(models.Instance.uuid.in_(
            select(models.Tag.resource_id).where(models.Tag.tag.in_(filters['tags-any']))))
    if filters.get('not-tags-any'):
        query = query.filter(models.Instance.uuid.not_in(
            select(models.Tag.resource_id).where(
                models.Tag.tag.in_(filters['not-tags-any']))))

    marker_row = marker if marker is not None and not isinstance(marker, str) else None
    if isinstance(marker, str):
        marker_row = session.scalars(select(models.Instance).filter_by(uuid=marker)).first()
        if marker_row is None:
            raise exception.MarkerNotFound(marker=marker)
    if 'id' not in sort_keys:
        sort_keys = list(sort_keys) + ['id']
        sort_dirs = list(sort_dirs) + [sort_dirs[0] if sort_dirs else 'desc']
    try:
        query = sqlalchemyutils.paginate_query(query, models.Instance, limit, sort_keys,
                                               marker=marker_row, sort_dirs=sort_dirs)
    except sqlalchemyutils.InvalidSortKey as exc:
        raise exception.InvalidSortKey(key=str(exc)) from exc
    return query
