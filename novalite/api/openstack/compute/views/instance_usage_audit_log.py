"""The view of an instance usage audit period: what each compute host's audit did."""
from __future__ import annotations

import datetime
from collections.abc import Iterable

from novalite.objects.task_log import DONE, RUNNING, TaskLog


def audit_log(task_logs: Iterable[TaskLog], hosts: set[str], begin: datetime.datetime,
              end: datetime.datetime) -> dict:
    """Nova's summary of the period [begin, end) over the compute ``hosts``.

    :param task_logs: the period's audit records, of every cell
    """
    logs = list(task_logs)
    done = {t.host for t in logs if t.state == DONE}
    running = {t.host for t in logs if t.state == RUNNING}
    not_run = sorted(hosts - {t.host for t in logs})
    errors = sum(t.errors or 0 for t in logs)
    overall = '%s hosts done. %s errors.' % (
        'ALL' if len(done) == len(hosts) else '%s of %s' % (len(done), len(hosts)), errors)
    return {
        'period_beginning': str(begin),
        'period_ending': str(end),
        'num_hosts': len(hosts),
        'num_hosts_done': len(done),
        'num_hosts_running': len(running),
        'num_hosts_not_run': len(not_run),
        'hosts_not_run': not_run,
        'total_instances': sum(t.task_items or 0 for t in logs),
        'total_errors': errors,
        'overall_status': overall,
        'log': {t.host: {'state': t.state, 'instances': t.task_items or 0,
                         'errors': t.errors or 0, 'message': t.message}
                for t in logs},
    }
