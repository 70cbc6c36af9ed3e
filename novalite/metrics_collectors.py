"""Metrics read at scrape time from the databases (the API and conductor only).

``novalite_servers`` counts the servers of every cell by vm_state, the build requests
not yet in a cell counted as ``building``; the counts are kept a few seconds
(``[metrics] servers_cache_seconds``), so that several scrapers cost the cells one
query each per period.
"""
from __future__ import annotations

import collections
import threading
from collections.abc import Iterable

import cachetools
from oslo_log import log as logging
from prometheus_client.core import GaugeMetricFamily, Metric
from sqlalchemy import func, select

from novalite import context as nl_context
from novalite import objects
from novalite.compute import vm_states
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models

LOG = logging.getLogger(__name__)

# A cell that does not answer within this many seconds is left out of the scrape (and
# counted in novalite_servers_cells_unanswered), rather than holding the scrape up.
CELL_TIMEOUT = 5.0


def _counts_in_cell(context: nl_context.RequestContext) -> dict[str, int]:
    query = select(models.Instance.vm_state, func.count()).where(
        models.Instance.deleted == 0).group_by(models.Instance.vm_state)
    with engine.cell_reader(context) as session:
        return {str(state): int(count) for state, count in session.execute(query)}


def _build_requests() -> int:
    with engine.api_reader() as session:
        return int(session.scalar(
            select(func.count()).select_from(api_models.BuildRequest)) or 0)


def servers_per_state() -> tuple[dict[str, int], int]:
    """(servers by vm_state over all cells, how many cells did not answer)."""
    context = nl_context.get_admin_context()
    cells = list(objects.CellMappingList.get_all(context))
    results = nl_context.scatter_gather_cells(context, cells, CELL_TIMEOUT, _counts_in_cell)
    totals: collections.Counter[str] = collections.Counter()
    unanswered = 0
    for result in results.values():
        if isinstance(result, dict):
            totals.update(result)
        else:
            unanswered += 1
    totals[vm_states.BUILDING] += _build_requests()
    return dict(totals), unanswered


class ServersCollector:
    """The servers-per-state gauges, read from the databases at most once per
    ``cache_seconds``."""

    def __init__(self, cache_seconds: float) -> None:
        self._cache: cachetools.TTLCache[str, tuple[dict[str, int], int]] = \
            cachetools.TTLCache(maxsize=1, ttl=cache_seconds)
        self._lock = threading.Lock()

    def _read(self) -> tuple[dict[str, int], int]:
        with self._lock:
            found = self._cache.get('servers')
            if found is None:
                found = self._cache['servers'] = servers_per_state()
            return found

    def collect(self) -> Iterable[Metric]:
        try:
            counts, unanswered = self._read()
        except Exception as exc:
            # The scrape still serves the other metrics; the gauge is absent meanwhile.
            LOG.warning('Could not count the servers per state: %s', exc)
            return
        servers = GaugeMetricFamily('novalite_servers', 'Servers by vm_state, over all '
                                    'cells (building includes the build requests).',
                                    labels=['vm_state'])
        for state in sorted(set(counts) | {vm_states.ACTIVE, vm_states.ERROR,
                                            vm_states.BUILDING}):
            servers.add_metric([state], counts.get(state, 0))
        yield servers
        yield GaugeMetricFamily('novalite_servers_cells_unanswered', 'Cells whose database '
                                'did not answer the last count of novalite_servers.',
                                value=unanswered)
