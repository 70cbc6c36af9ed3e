"""Lookups every status poll repeats, cached in the API process.

A client polling ``GET /servers/{id}`` asks, each time, which cell holds the server and
whether its host's compute service is up. The first answer never changes once the
server is in a cell (novalite does not move servers between cells), so it is kept; the
second changes with heartbeats that come every ``report_interval`` seconds and is kept
for ``SERVICE_TTL`` seconds.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any

from novalite import exception, objects

MAX_ENTRIES = 20000
SERVICE_TTL = 1.0

_LOCK = threading.Lock()
_CELLS: collections.OrderedDict[str, Any] = collections.OrderedDict()
_SERVICES: dict[tuple[str, str], tuple[float, Any]] = {}


def cell_of(context: Any, instance_uuid: str) -> Any:
    """The cell mapping of the server, or None while it is a build request.

    :raises InstanceMappingNotFound: no such server
    """
    with _LOCK:
        cell = _CELLS.get(instance_uuid)
        if cell is not None:
            _CELLS.move_to_end(instance_uuid)
            return cell
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance_uuid)
    cell = mapping.cell_mapping
    if cell is not None:
        _remember(instance_uuid, cell)
    return cell


def locate(context: Any, instance_uuid: str) -> tuple[Any, Any]:
    """Where the server is: ``(cell mapping, None)`` once it is in a cell, ``(None,
    build request)`` while it is being scheduled, ``(None, None)`` if its build request
    went but the mapping still had no cell when read (the conductor is between the two
    writes: ask again). A server being scheduled costs one API-database query.

    :raises InstanceMappingNotFound: no such server
    """
    with _LOCK:
        cell = _CELLS.get(instance_uuid)
        if cell is not None:
            _CELLS.move_to_end(instance_uuid)
            return cell, None
    mapping, build_request = objects.InstanceMapping.get_with_build_request(
        context, instance_uuid)
    cell = mapping.cell_mapping
    if cell is None:
        return None, build_request
    _remember(instance_uuid, cell)
    return cell, None


def _remember(instance_uuid: str, cell: Any) -> None:
    with _LOCK:
        _CELLS[instance_uuid] = cell
        while len(_CELLS) > MAX_ENTRIES:
            _CELLS.popitem(last=False)


def compute_service(context: Any, host: str) -> Any:
    """The compute service of ``host`` in the context's cell (None if there is none),
    as read at most SERVICE_TTL seconds ago."""
    key = (getattr(context, 'db_connection', None) or '', host)
    now = time.monotonic()
    with _LOCK:
        cached = _SERVICES.get(key)
        if cached is not None and now - cached[0] < SERVICE_TTL:
            return cached[1]
    try:
        service = objects.Service.get_by_host_and_binary(context, host, 'novalite-compute')
    except exception.NotFound:
        service = None
    with _LOCK:
        if len(_SERVICES) > MAX_ENTRIES:
            _SERVICES.clear()
        _SERVICES[key] = (now, service)
    return service


def forget() -> None:
    """Drop everything (tests; a service changed by this process)."""
    with _LOCK:
        _CELLS.clear()
        _SERVICES.clear()
