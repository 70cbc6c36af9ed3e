"""The work behind ``novalite-manage cell_v2 map_instances`` and ``verify_instance``:
instance mappings, the API database's record of which cell holds each server.

``map_instances`` walks a cell's instances oldest first, in batches, and maps those that
have none. A run stopped by ``--max-count`` leaves its place as Nova does: an
instance_mappings row of project ``INSTANCE_MIGRATION_MARKER`` whose instance_uuid is the
last instance seen with its dashes turned to spaces (the real uuid has its own row, and
instance_uuid is unique). The next run reads it, deletes it, and goes on from there.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from oslo_db import exception as db_exc
from sqlalchemy import Row, delete, insert, select

from novalite import context as nl_context
from novalite import exception, objects
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models

if TYPE_CHECKING:
    from novalite.context import RequestContext

MARKER_PROJECT_ID = 'INSTANCE_MIGRATION_MARKER'
BATCH_SIZE = 50

# map_instances' exit codes (Nova's): 255 is Nova's "unexpected error", which a missing
# cell is there (an exception); 1 is kept for "run again".
MAPPED_ALL, MORE_TO_MAP, BAD_MAX_COUNT, CELL_NOT_FOUND = 0, 1, 127, 255


def _parse_max_count(max_count: str | None) -> int | None:
    """The batch size asked for; None without ``--max-count``; raises ValueError when
    it is not a positive integer."""
    if max_count is None:
        return None
    count = int(max_count)
    if count < 1:
        raise ValueError(max_count)
    return count


def _pop_marker() -> str | None:
    """The instance uuid a previous run stopped at (its marker row deleted), or None."""
    table = api_models.InstanceMapping
    with engine.api_writer() as session:
        rows = session.scalars(select(table.instance_uuid)
                               .filter_by(project_id=MARKER_PROJECT_ID)).all()
        session.execute(delete(table).where(table.project_id == MARKER_PROJECT_ID))
    return rows[0].replace(' ', '-') if rows else None


def _save_marker(instance_uuid: str) -> None:
    with engine.api_writer() as session:
        session.execute(insert(api_models.InstanceMapping).values(
            instance_uuid=instance_uuid.replace('-', ' '), project_id=MARKER_PROJECT_ID,
            user_id=MARKER_PROJECT_ID, cell_id=None))


def _marker_id(cctxt: RequestContext, marker: str | None) -> int:
    """The id after which to go on: 0 from the start, or for a marker whose instance is
    not in this cell (archived meanwhile, or a stopped run's on another cell: the marker
    is one for all cells, as Nova's); mapping again what is mapped is harmless."""
    if marker is None:
        return 0
    with engine.cell_reader(cctxt) as session:
        found = session.scalar(select(main_models.Instance.id).filter_by(uuid=marker))
    if found is None:
        print('The instance %s where the previous run stopped is not in this cell: '
              'starting from the beginning.' % marker)
        return 0
    return found


def _instances_after(cctxt: RequestContext, after_id: int, limit: int) -> Sequence[Row]:
    """The next ``limit`` instances of the cell, deleted ones included, oldest first."""
    table = main_models.Instance
    with engine.cell_reader(cctxt) as session:
        return session.execute(
            select(table.id, table.uuid, table.project_id, table.user_id)
            .where(table.id > after_id).order_by(table.id).limit(limit)).all()


def _map_batch(ctxt: RequestContext, cell: objects.CellMapping, rows: Sequence[Row]) -> int:
    """Map the instances of ``rows`` that have no mapping; the number mapped."""
    uuids = [row.uuid for row in rows]
    with engine.api_reader() as session:
        mapped = set(session.scalars(select(api_models.InstanceMapping.instance_uuid)
                                     .where(api_models.InstanceMapping.instance_uuid
                                            .in_(uuids))))
    created = 0
    for row in rows:
        if row.uuid in mapped:
            continue
        try:
            objects.InstanceMapping(ctxt, instance_uuid=row.uuid, cell_mapping=cell,
                                    project_id=row.project_id, user_id=row.user_id).create()
            created += 1
        except db_exc.DBDuplicateEntry:
            continue  # mapped meanwhile (the API booting it, another run)
    return created


def map_instances(cell_uuid: str, max_count: str | None = None, reset: bool = False) -> int:
    try:
        batch = _parse_max_count(max_count)
    except ValueError:
        print('Must supply a positive value for max-count')
        return BAD_MAX_COUNT
    ctxt = nl_context.get_admin_context()
    try:
        cell = objects.CellMapping.get_by_uuid(ctxt, cell_uuid)
    except exception.CellMappingNotFound:
        print('Cell with uuid %s was not found.' % cell_uuid)
        return CELL_NOT_FOUND
    marker = _pop_marker()
    if reset:
        marker = None
    limit = batch or BATCH_SIZE
    with nl_context.target_cell(ctxt, cell) as cctxt:
        after_id = _marker_id(cctxt, marker)
        while True:
            rows = _instances_after(cctxt, after_id, limit)
            _map_batch(ctxt, cell, rows)
            if len(rows) < limit:
                return MAPPED_ALL
            after_id = rows[-1].id
            if batch is not None:
                # A full batch may have been the last: the next run will tell (as Nova).
                _save_marker(rows[-1].uuid)
                return MORE_TO_MAP


# verify_instance's exit codes, Nova's.
MAPPED, NOT_MAPPED, NO_CELL, DELETED, ARCHIVED = 0, 1, 2, 3, 4


def verify_instance(uuid: str, quiet: bool = False) -> int:
    say: Callable[[str], None] = (lambda msg: None) if quiet else print
    ctxt = nl_context.get_admin_context()
    try:
        mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, uuid)
    except exception.InstanceMappingNotFound:
        say('Instance %s is not mapped to a cell (upgrade is incomplete) or instance '
            'does not exist' % uuid)
        return NOT_MAPPED
    cell = mapping.cell_mapping
    if cell is None:
        say('Instance %s is not mapped to a cell' % uuid)
        return NO_CELL
    with nl_context.target_cell(ctxt, cell) as cctxt:
        try:
            objects.Instance.get_by_uuid(cctxt, uuid)
        except exception.InstanceNotFound:
            try:
                objects.Instance.get_by_uuid(cctxt.elevated(read_deleted='yes'), uuid)
            except exception.InstanceNotFound:
                say('The instance with uuid %s has been archived.' % uuid)
                say('However its instance_mapping remains.')
                return ARCHIVED
            say('The instance with uuid %s has been deleted.' % uuid)
            say('Execute `novalite-manage db archive_deleted_rows` command to archive '
                'this deleted instance and remove its instance_mapping.')
            return DELETED
    say('Instance %s is in cell: %s (%s)' % (uuid, cell.name, cell.uuid))
    return MAPPED
