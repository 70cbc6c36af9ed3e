"""The compute's periodic instance usage audit, and the audit periods it runs for.

Once per period (``[DEFAULT] instance_usage_audit_period``) each compute host sends an
``instance.exists`` notification for every instance that existed on it during the
period that ended last, and records the run in the cell's task log (RUNNING, then DONE
with its error count), through the conductor like every other compute write. The
os-instance_usage_audit_log API reports those records.
"""
from __future__ import annotations

import datetime
import time
from typing import Protocol

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import notifications, objects, rpc
from novalite.conf import CONF
from novalite.objects.instance import Instance

LOG = logging.getLogger(__name__)

TASK_NAME = 'instance_usage_audit'
# The InstanceExistsPayload version whose fields the notification sends.
EXISTS_PAYLOAD_VERSION = '2.1'


class AuditingManager(Protocol):
    """What the audit needs of the compute manager."""

    host: str


def _month_before(year: int, month: int) -> tuple[int, int]:
    return (year - 1, 12) if month == 1 else (year, month - 1)


def last_completed_audit_period(unit: str | None = None,
                                before: datetime.datetime | None = None
                                ) -> tuple[datetime.datetime, datetime.datetime]:
    """(begin, end), naive UTC, of the audit period that ended last before ``before``
    (now by default); a period ending exactly at ``before`` has not ended yet.

    :param unit: ``hour``, ``day``, ``month`` or ``year``, optionally ``@offset``
        (minutes, hours, day of the month or month of the year the period starts at);
        ``[DEFAULT] instance_usage_audit_period`` by default
    """
    unit = unit or CONF.instance_usage_audit_period
    offset = 0
    if '@' in unit:
        unit, raw = unit.split('@', 1)
        offset = int(raw)
    now = before if before is not None else timeutils.utcnow()
    if now.tzinfo is not None:
        now = timeutils.normalize_time(now)
    if unit == 'month':
        day = offset or 1
        end = datetime.datetime(now.year, now.month, day)
        if end >= now:
            end = datetime.datetime(*_month_before(now.year, now.month), day)
        begin = datetime.datetime(*_month_before(end.year, end.month), day)
    elif unit == 'year':
        month = offset or 1
        end = datetime.datetime(now.year, month, 1)
        if end >= now:
            end = datetime.datetime(now.year - 1, month, 1)
        begin = datetime.datetime(end.year - 1, month, 1)
    elif unit == 'day':
        end = datetime.datetime(now.year, now.month, now.day, offset)
        if end >= now:
            end -= datetime.timedelta(days=1)
        begin = end - datetime.timedelta(days=1)
    else:
        end = now.replace(minute=offset, second=0, microsecond=0)
        if end >= now:
            end -= datetime.timedelta(hours=1)
        begin = end - datetime.timedelta(hours=1)
    return begin, end


def exists_payload(instance: Instance, begin: datetime.datetime,
                   end: datetime.datetime) -> dict:
    """The InstanceExistsPayload of ``instance`` for the period."""
    payload = notifications.instance_payload(instance)
    payload['nova_object.name'] = 'InstanceExistsPayload'
    payload['nova_object.version'] = EXISTS_PAYLOAD_VERSION
    payload['nova_object.data']['audit_period'] = {
        'nova_object.name': 'AuditPeriodPayload', 'nova_object.namespace': 'nova',
        'nova_object.version': '1.0',
        'nova_object.data': {'audit_period_beginning': begin.isoformat(),
                             'audit_period_ending': end.isoformat()}}
    return payload


def audit_instance_usage(mgr: AuditingManager, context: nl_context.RequestContext) -> None:
    """Audit the period that ended last, unless this host has a record of it already."""
    begin, end = last_completed_audit_period()
    if objects.TaskLog.get(context, TASK_NAME, begin.isoformat(), end.isoformat(),
                           mgr.host) is not None:
        return
    instances = objects.InstanceList.get_active_by_window_joined(
        context, begin.isoformat(), end.isoformat(), host=mgr.host,
        expected_attrs=['flavor', 'metadata'])
    LOG.info('Running instance usage audit for host %s from %s to %s. %d instances.',
             mgr.host, begin, end, len(instances))
    started = time.monotonic()
    task_log = objects.TaskLog(context, task_name=TASK_NAME, period_beginning=begin,
                               period_ending=end, host=mgr.host,
                               task_items=len(instances),
                               message='Instance usage audit started...')
    task_log.begin_task()
    notifier = rpc.get_notifier('novalite-compute:%s' % mgr.host)
    errors = 0
    for instance in instances:
        if notifier is None:
            continue
        try:
            notifier.info(context, 'instance.exists', exists_payload(instance, begin, end))
        except Exception:
            LOG.exception('Failed to generate usage audit for instance %s on host %s',
                          instance.uuid, mgr.host)
            errors += 1
    task_log.errors = errors
    task_log.message = ('Instance usage audit ran for host %s, %s instances in %s seconds.'
                        % (mgr.host, len(instances), time.monotonic() - started))
    task_log.end_task()
