"""The instances that ran during a time window, across cells (simple tenant usage).

An instance counts when it was launched before the window ends and was not terminated
before it starts; deleted instances count too, since they ran. Pages are ordered by
(project_id, uuid) and walk the cells one after the other, as Nova does: the marker is
looked for cell by cell, and the cells after it continue the page.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from sqlalchemy import and_, or_, select

from novalite import context as nl_context
from novalite import exception, objects
from novalite.db import engine
from novalite.db.main import models
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy import Select

    from novalite.context import RequestContext


def _window_query(start: datetime.datetime, stop: datetime.datetime,
                  project_id: str | None) -> Select[models.Instance]:
    table = models.Instance
    query = select(table).where(
        or_(table.terminated_at.is_(None), table.terminated_at > base.naive_utc(start)),
        table.launched_at < base.naive_utc(stop))
    if project_id is not None:
        query = query.where(table.project_id == project_id)
    return query.order_by(table.project_id, table.uuid)


def _cell_instances(cctxt: RequestContext, start: datetime.datetime, stop: datetime.datetime,
                    project_id: str | None, limit: int | None, marker: str | None) -> list:
    """This cell's page; :raises MarkerNotFound: the marker is not in this cell."""
    table = models.Instance
    query = _window_query(start, stop, project_id)
    with engine.cell_reader(cctxt) as session:
        if marker is not None:
            row = session.scalars(select(table).filter_by(uuid=marker)).first()
            if row is None:
                raise exception.MarkerNotFound(marker=marker)
            query = query.where(or_(table.project_id > row.project_id,
                                    and_(table.project_id == row.project_id,
                                         table.uuid > row.uuid)))
        if limit is not None:
            query = query.limit(limit)
        rows = list(session.scalars(query))
        return list(objects.InstanceList._from_rows(cctxt, session, rows))


def instances_in_window(context: RequestContext, start: datetime.datetime, stop: datetime.datetime,
                        project_id: str | None = None, limit: int | None = None,
                        marker: str | None = None) -> list:
    """Instances (deleted ones included) that ran between ``start`` and ``stop``.

    :raises MarkerNotFound: no cell has an instance with the marker's uuid
    """
    found: list = []
    for cell in objects.CellMappingList.get_all(context):
        if cell.is_cell0:
            continue  # never launched: nothing to charge
        with nl_context.target_cell(context, cell) as cctxt:
            try:
                page = _cell_instances(cctxt, start, stop, project_id, limit, marker)
            except exception.MarkerNotFound:
                continue
        found += page
        marker = None  # found in this cell: the next cells continue from their start
        if limit is not None:
            limit -= len(page)
            if limit <= 0:
                break
    if marker is not None:
        raise exception.MarkerNotFound(marker=marker)
    return found
