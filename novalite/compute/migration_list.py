"""Listing migrations across every cell.

Unpaged lists (before 2.59) are the cells' lists one after the other. Paged lists are
sorted newest first by (created_at, id): each cell returns its own page after the
marker, and the pages are merged and cut to ``limit``. The marker (a migration uuid)
may live in any cell; its sort values are looked up once and passed to every cell.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from novalite import context as nl_context
from novalite import exception, objects

if TYPE_CHECKING:
    from novalite.context import RequestContext

# Seconds to wait for one cell's database before listing without it.
CELL_TIMEOUT = 60


def _cells(context: RequestContext) -> list:
    return [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]


def _answers(results: dict, cells: list) -> list[Any]:
    """The results of the cells that answered, in cell-mapping order."""
    return [results[c.uuid] for c in cells
            if c.uuid in results and results[c.uuid] is not nl_context.did_not_respond_sentinel
            and not isinstance(results[c.uuid], Exception)]


def get_migrations(context: RequestContext, filters: dict) -> list:
    """Every migration matching ``filters``, cell by cell, each cell by id."""
    cells = _cells(context)
    results = nl_context.scatter_gather_cells(
        context, cells, CELL_TIMEOUT,
        lambda cctxt: list(objects.MigrationList.get_by_filters(cctxt, filters)))
    return [m for found in _answers(results, cells) for m in found]


def _marker_values(context: RequestContext, cells: list, marker: str) -> tuple:
    for cell in cells:
        with nl_context.target_cell(context, cell) as cctxt:
            try:
                migration = objects.Migration.get_by_uuid(cctxt, marker)
            except exception.MigrationNotFound:
                continue
            return migration.created_at, migration.id
    raise exception.MarkerNotFound(marker=marker)


def _sort_key(migration: objects.Migration) -> tuple:
    created = migration.created_at or datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return created, migration.id


def get_migrations_sorted(context: RequestContext, filters: dict, limit: int | None = None,
                          marker: str | None = None) -> list:
    """Migrations matching ``filters``, newest first, the page after ``marker``.

    :raises MarkerNotFound: no cell has a migration with the marker's uuid
    """
    cells = _cells(context)
    after = _marker_values(context, cells, marker) if marker else None
    results = nl_context.scatter_gather_cells(
        context, cells, CELL_TIMEOUT,
        lambda cctxt: list(objects.MigrationList.get_by_filters(
            cctxt, filters, limit=limit, after=after, newest_first=True)))
    merged = sorted((m for found in _answers(results, cells) for m in found),
                    key=_sort_key, reverse=True)
    return merged[:limit] if limit is not None else merged
