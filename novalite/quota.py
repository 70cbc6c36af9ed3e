"""Quotas by counting: usage is counted from the databases, never reserved.

Limits come from, in order: per-user rows (``project_user_quotas``), per-project rows
(``quotas``), the ``default`` quota class (``quota_classes``), then ``[quota]`` options.
Usage of instances, cores and ram is counted in every cell plus the build requests
not yet in a cell. The API checks before creating; the conductor checks again after,
so that concurrent requests cannot together pass a limit.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from novalite import exception
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.api import models as api_models

COUNTED = ('instances', 'cores', 'ram')


def get_limits(context: Any, project_id: str, user_id: str | None = None) -> dict[str, int]:
    limits = {name: getattr(CONF.quota, name) for name in COUNTED}
    with engine.api_reader() as session:
        for row in session.scalars(select(api_models.QuotaClass)
                                   .filter_by(class_name='default')):
            if row.resource in limits and row.hard_limit is not None:
                limits[row.resource] = row.hard_limit
        for row in session.scalars(select(api_models.Quota).filter_by(project_id=project_id)):
            if row.resource in limits and row.hard_limit is not None:
                limits[row.resource] = row.hard_limit
        if user_id:
            for row in session.scalars(select(api_models.ProjectUserQuota)
                                       .filter_by(project_id=project_id, user_id=user_id)):
                if row.resource in limits and row.hard_limit is not None:
                    limits[row.resource] = min(limits[row.resource], row.hard_limit) \
                        if limits[row.resource] >= 0 else row.hard_limit
    return limits


def count_usage(context: Any, project_id: str) -> dict[str, int]:
    """instances, cores and ram the project uses in all cells and in build requests."""
    from novalite import context as nl_context
    from novalite import objects
    usage = dict.fromkeys(COUNTED, 0)
    cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    cell0 = [c for c in objects.CellMappingList.get_all(context) if c.is_cell0]
    results = nl_context.scatter_gather_cells(
        context, cells + cell0, 30,
        lambda cctxt: objects.InstanceList.get_counts(cctxt, project_id))
    for result in results.values():
        if isinstance(result, dict):
            for key in COUNTED:
                usage[key] += result['project'][key]
        else:
            raise exception.CellTimeout()
    for build_request in objects.BuildRequestList.get_all(context, project_id=project_id):
        instance = build_request.instance
        usage['instances'] += 1
        usage['cores'] += instance.vcpus or 0
        usage['ram'] += instance.memory_mb or 0
    return usage


def check_deltas(context: Any, deltas: dict[str, int], project_id: str,
                 user_id: str | None = None) -> None:
    """Raise ``TooManyInstances`` if adding ``deltas`` passes a limit."""
    headroom(context, deltas, project_id, user_id, raise_over=True)


def headroom(context: Any, deltas: dict[str, int], project_id: str,
             user_id: str | None = None, raise_over: bool = False) -> dict[str, int]:
    """How much of each resource is left (-1: unlimited); raise when ``deltas`` does not
    fit and ``raise_over``."""
    limits = get_limits(context, project_id, user_id)
    usage = count_usage(context, project_id)
    left = {k: -1 if limits[k] < 0 else limits[k] - usage[k] for k in COUNTED}
    overs = sorted(k for k, v in deltas.items()
                   if k in limits and limits[k] >= 0 and usage[k] + v > limits[k])
    if overs and raise_over:
        raise exception.TooManyInstances(
            overs=', '.join(overs), req=', '.join(str(deltas[k]) for k in overs),
            used=', '.join(str(usage[k]) for k in overs),
            allowed=', '.join(str(limits[k]) for k in overs))
    return left
