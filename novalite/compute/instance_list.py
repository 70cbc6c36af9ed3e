"""Listing servers across build requests and every cell, in one sort order.

Each cell returns its own sorted page after the marker; the pages and the matching
build requests are merged and cut to ``limit``. The marker may be in any cell or be a
build request: its sort values are looked up once and passed to every cell.

Build requests are read before the cells. A server the conductor moves into a cell
meanwhile is then both a build request read and a cell row (the conductor creates the
instance before it deletes the build request): the cell's copy wins, so it is listed
once, and always at least once.
"""
from __future__ import annotations

import datetime
import functools
import types
from typing import Any

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.main import models

LOG = logging.getLogger(__name__)

# Seconds a cell has to answer; a cell that has not answered by then is left out of the
# list (as Nova's [api] list_records_by_skipping_down_cells, on by default).
CELL_TIMEOUT = 60

# The marker's sort values: its row when a cell holds it, else its build request's.
Marker = types.SimpleNamespace | models.Instance

_BUILD_REQUEST_KEYS = ('project_id', 'user_id', 'vm_state', 'task_state', 'image_ref',
                       'instance_type_id', 'uuid')


def _value(obj: object, key: str) -> object:
    if hasattr(obj, 'obj_attr_is_set'):
        # A versioned object keeps a set field in _obj_<name>; unset reads as None.
        value = getattr(obj, '_obj_' + key, None)
    else:
        value = getattr(obj, key, None)
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def _sort_values(obj: object, sort_keys: list[str]) -> tuple:
    return tuple(_value(obj, key) for key in sort_keys)


def _compare_values(va: tuple, vb: tuple, sort_dirs: list[str]) -> int:
    for a, b, direction in zip(va, vb, sort_dirs, strict=True):
        if a == b:
            continue
        # NULLs sort first ascending and last descending, as the databases do.
        if a is None:
            result = -1
        elif b is None:
            result = 1
        else:
            result = -1 if a < b else 1
        return result if direction == 'asc' else -result
    return 0


def _compare(a: object, b: object, sort_keys: list[str], sort_dirs: list[str]) -> int:
    return _compare_values(_sort_values(a, sort_keys), _sort_values(b, sort_keys), sort_dirs)


def _matches(instance: objects.Instance, filters: dict) -> bool:
    """Whether a build request's instance passes the simple filters."""
    import re
    if filters.get('deleted') or filters.get('host') or filters.get('node'):
        return False
    for key in _BUILD_REQUEST_KEYS:
        if key in filters:
            want = filters[key]
            value = getattr(instance, key, None)
            if isinstance(want, (list, tuple, set)):
                if value not in want:
                    return False
            elif value != want:
                return False
    name = filters.get('name') or filters.get('display_name')
    if name and not re.search(name, instance.display_name or ''):
        return False
    tags = set(filters.get('tags') or [])
    if tags and not tags.issubset(set(instance.tags or [])):
        return False
    not_tags = set(filters.get('not-tags') or [])
    if not_tags and not_tags.issubset(set(instance.tags or [])):
        return False
    any_tags = set(filters.get('tags-any') or [])
    if any_tags and not any_tags & set(instance.tags or []):
        return False
    if set(filters.get('not-tags-any') or []) & set(instance.tags or []):
        return False
    for key, field in (('description', 'display_description'), ('key_name', 'key_name'),
                       ('hostname', 'hostname'), ('reservation_id', 'reservation_id'),
                       ('availability_zone', 'availability_zone')):
        if filters.get(key) and not re.search(filters[key], getattr(instance, field) or ''):
            return False
    if 'locked' in filters and bool(instance.locked) != filters['locked']:
        return False
    since = filters.get('changes-since')
    if since is not None and (instance.updated_at or instance.created_at) < since:
        return False
    return True


def _marker_mapping(context: nl_context.RequestContext,
                    marker: str) -> tuple[Any, Any]:
    """(cell mapping, None) or (None, build request) of the marker; its build request
    gone means it was just moved into a cell, so the mapping is read once more."""
    for _attempt in range(2):
        try:
            mapping = objects.InstanceMapping.get_by_instance_uuid(context, marker)
        except exception.InstanceMappingNotFound as exc:
            raise exception.MarkerNotFound(marker=marker) from exc
        if mapping.cell_mapping is not None:
            return mapping.cell_mapping, None
        try:
            return None, objects.BuildRequest.get_by_instance_uuid(context, marker)
        except exception.BuildRequestNotFound:
            continue
    raise exception.MarkerNotFound(marker=marker)


def _find_marker(context: RequestContext, marker: str, sort_keys: list[str]) -> Marker:
    """The marker's sort values, wherever the marker lives."""
    cell_mapping, build_request = _marker_mapping(context, marker)
    if build_request is not None:
        instance = build_request.instance
        values = {k: getattr(instance, k, None) for k in sort_keys}
        values.setdefault('id', 0)
        return types.SimpleNamespace(**values)
    with nl_context.target_cell(context, cell_mapping) as cctxt:
        with engine.cell_reader(cctxt) as session:
            from sqlalchemy import select
            row = session.scalars(select(models.Instance).filter_by(uuid=marker)).first()
            if row is None:
                raise exception.MarkerNotFound(marker=marker)
            session.expunge(row)
            return row


def get_instances_sorted(context: RequestContext, filters: dict, limit: int | None,
                         marker: str | None, sort_keys: list[str], sort_dirs: list[str],
                         expected_attrs: list) -> list:
    sort_keys = list(sort_keys)
    sort_dirs = list(sort_dirs) + [sort_dirs[-1] if sort_dirs else 'desc'] * \
        (len(sort_keys) - len(sort_dirs))
    for key in sort_keys:
        if not hasattr(models.Instance, key):
            raise exception.InvalidSortKey(key=key)
    if 'uuid' not in sort_keys:
        sort_keys.append('uuid')
        sort_dirs.append(sort_dirs[0])
    if 'flavor' in filters:
        flavorid = filters.pop('flavor')
        try:
            filters['instance_type_id'] = objects.Flavor.get_by_flavor_id(context,
                                                                          flavorid).id
        except exception.FlavorNotFound:
            return []
    marker_obj = _find_marker(context, marker, sort_keys) if marker else None
    # Build requests first: read after the cells, a server moved in between would be
    # in neither.
    building = _build_request_instances(context, filters, marker, marker_obj, sort_keys,
                                        sort_dirs)
    in_cells = _cell_instances(context, filters, limit, marker_obj, sort_keys, sort_dirs,
                               expected_attrs)
    return merge(building, in_cells, sort_keys, sort_dirs, limit)


def _build_request_instances(context: nl_context.RequestContext, filters: dict, marker: str | None,
                             marker_obj: Marker | None, sort_keys: list[str],
                             sort_dirs: list[str]) -> list:
    """The instances of the build requests that match, after the marker."""
    if filters.get('deleted'):
        return []
    found = []
    project = filters.get('project_id')
    for build_request in objects.BuildRequestList.get_all(
            context, project_id=project if isinstance(project, str) else None):
        instance = build_request.instance
        instance.fault = None
        if _matches(instance, filters) and instance.uuid != marker:
            found.append(instance)
    if marker_obj is not None:
        found = [i for i in found if _compare(i, marker_obj, sort_keys, sort_dirs) > 0]
    return found


def _cell_instances(context: nl_context.RequestContext, filters: dict, limit: int | None,
                    marker_obj: Marker | None, sort_keys: list[str], sort_dirs: list[str],
                    expected_attrs: list) -> list:
    """Each cell's sorted page after the marker, concatenated."""
    cells = objects.CellMappingList.get_all(context)
    results = nl_context.scatter_gather_cells(
        context, list(cells), CELL_TIMEOUT,
        lambda cctxt: objects.InstanceList.get_by_filters(
            cctxt, filters, sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit,
            marker=marker_obj, expected_attrs=expected_attrs))
    found: list = []
    for cell_uuid, result in results.items():
        if isinstance(result, objects.InstanceList):
            found.extend(result.objects)
        elif result is nl_context.did_not_respond_sentinel:
            LOG.warning('Cell %s did not answer within %d seconds: its servers are left '
                        'out of the list', cell_uuid, CELL_TIMEOUT)
        elif isinstance(result, exception.NovaliteException):
            raise result
        else:
            raise exception.NovaliteException('Listing cell %s failed' % cell_uuid)
    return found


def merge(building: list, in_cells: list, sort_keys: list[str], sort_dirs: list[str],
          limit: int | None) -> list:
    """One sorted page of build-request and cell instances, each server once.

    A build request whose instance a cell already holds is left out before the page is
    cut, so a server in both does not take two places of ``limit``.
    """
    in_a_cell = {instance.uuid for instance in in_cells}
    found = [i for i in building if i.uuid not in in_a_cell] + list(in_cells)
    # Each server's sort values are read once, not at every comparison.
    keyed = [(_sort_values(instance, sort_keys), instance) for instance in found]

    def compare(a: tuple[tuple, object], b: tuple[tuple, object]) -> int:
        return _compare_values(a[0], b[0], sort_dirs)

    keyed.sort(key=functools.cmp_to_key(compare))
    found = [instance for _values, instance in keyed]
    return found[:limit] if limit is not None else found
