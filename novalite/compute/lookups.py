"""Lookups every status poll repeats, cached in the API process.

A client polling ``GET /servers/{id}`` asks, each time, which cell holds the server and
whether its host's compute service is up. The first answer never changes once the
server is in a cell (novalite does not move servers between cells), so it is kept (the
least recently used beyond ``MAX_ENTRIES`` go); the second changes with heartbeats that
come every ``report_interval`` seconds and is kept for ``SERVICE_TTL`` seconds.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import cachetools

from novalite import exception, objects

if TYPE_CHECKING:
    from novalite.context import RequestContext

MAX_ENTRIES = 20000
SERVICE_TTL = 1.0

_LOCK = threading.Lock()
# Instance uuid -> its cell; a server still being scheduled (no cell yet) is not kept.
_CELLS: cachetools.LRUCache[str, objects.CellMapping] = cachetools.LRUCache(MAX_ENTRIES)
# (cell database URL, host) -> the host's compute service, None when it has none.
_SERVICES: cachetools.TTLCache[tuple[str, str], objects.Service | None] = \
    cachetools.TTLCache(MAX_ENTRIES, ttl=SERVICE_TTL)


def _known_cell(instance_uuid: str) -> objects.CellMapping | None:
    with _LOCK:
        return _CELLS.get(instance_uuid)


def _remember(instance_uuid: str, cell: objects.CellMapping) -> None:
    with _LOCK:
        _CELLS[instance_uuid] = cell


def cell_of(context: RequestContext, instance_uuid: str) -> objects.CellMapping | None:
    """The cell mapping of the server, or None while it is a build request.

    :raises InstanceMappingNotFound: no such server
    """
    cell = _known_cell(instance_uuid)
    if cell is not None:
        return cell
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance_uuid)
    cell = mapping.cell_mapping
    if cell is not None:
        _remember(instance_uuid, cell)
    return cell


def locate(context: RequestContext, instance_uuid: str
           ) -> tuple[objects.CellMapping | None, objects.BuildRequest | None]:
    """Where the server is: ``(cell mapping, None)`` once it is in a cell, ``(None,
    build request)`` while it is being scheduled, ``(None, None)`` if its build request
    went but the mapping still had no cell when read (the conductor is between the two
    writes: ask again). A server being scheduled costs one API-database query.

    :raises InstanceMappingNotFound: no such server
    """
    cell = _known_cell(instance_uuid)
    if cell is not None:
        return cell, None
    mapping, build_request = objects.InstanceMapping.get_with_build_request(
        context, instance_uuid)
    cell = mapping.cell_mapping
    if cell is None:
        return None, build_request
    _remember(instance_uuid, cell)
    return cell, None


def _service_key(context: RequestContext, host: str) -> tuple[str, str]:
    return context.db_connection or '', host


@cachetools.cached(_SERVICES, key=_service_key, lock=_LOCK)
def compute_service(context: RequestContext, host: str) -> objects.Service | None:
    """The compute service of ``host`` in the context's cell (None if there is none),
    as read at most SERVICE_TTL seconds ago."""
    try:
        return objects.Service.get_by_host_and_binary(context, host, 'novalite-compute')
    except exception.NotFound:
        return None


def forget() -> None:
    """Drop everything (tests; a service changed by this process)."""
    with _LOCK:
        _CELLS.clear()
        _SERVICES.clear()
