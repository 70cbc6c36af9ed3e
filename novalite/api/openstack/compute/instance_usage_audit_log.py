"""The os-instance_usage_audit_log API: how the compute hosts' usage audits of the last
finished period went (or of the period that ended last before a given time).

The audit records live in the cell databases (``task_log``), written by each compute's
periodic usage audit (``[DEFAULT] instance_usage_audit``); hosts are the compute
services of every cell, disabled ones included (they may still have instances).
"""
from __future__ import annotations

import datetime

import webob.exc

from novalite import context as nl_context
from novalite import objects
from novalite.api import validation
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import instance_usage_audit_log as schema
from novalite.api.openstack.compute.views import instance_usage_audit_log as view
from novalite.availability_zones import COMPUTE_BINARY
from novalite.compute import usage_audit
from novalite.objects.service import Service
from novalite.objects.task_log import TaskLog
from novalite.policies import instance_usage_audit_log as iual_policies

# Seconds to wait for one cell's database before reporting without it.
CELL_TIMEOUT = 60


def _cell_records(cctxt: nl_context.RequestContext, begin: datetime.datetime,
                  end: datetime.datetime) -> tuple[list[TaskLog], list[Service]]:
    return (list(objects.TaskLogList.get_all(cctxt, usage_audit.TASK_NAME, begin, end)),
            list(objects.ServiceList.get_by_binary(cctxt, COMPUTE_BINARY)))


def _parse_before(value: str) -> datetime.datetime:
    layout = '%Y-%m-%d %H:%M:%S.%f' if '.' in value else '%Y-%m-%d %H:%M:%S'
    try:
        return datetime.datetime.strptime(value, layout)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid timestamp for date %s' % value) from exc


class InstanceUsageAuditLogController(wsgi.Controller):

    @validation.query_schema(schema.index_query, '2.1', '2.101')
    @validation.query_schema(schema.index_query_v2102, '2.102')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(iual_policies.BASE % 'list', {})
        return {'instance_usage_audit_logs': self._audit_log(context)}

    @validation.query_schema(schema.show_query, '2.1', '2.101')
    @validation.query_schema(schema.show_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        context.can(iual_policies.BASE % 'show', {})
        before = _parse_before(id)
        return {'instance_usage_audit_log': self._audit_log(context, before)}

    @staticmethod
    def _audit_log(context: nl_context.RequestContext,
                   before: datetime.datetime | None = None) -> dict:
        begin, end = usage_audit.last_completed_audit_period(before=before)
        cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
        results = nl_context.scatter_gather_cells(context, cells, CELL_TIMEOUT,
                                                  _cell_records, begin, end)
        task_logs: list[TaskLog] = []
        hosts: set[str] = set()
        for result in results.values():
            if isinstance(result, tuple):
                task_logs += result[0]
                hosts |= {s.host for s in result[1]}
        return view.audit_log(task_logs, hosts, begin, end)
