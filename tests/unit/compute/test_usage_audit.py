"""The audit periods of the instance usage audit and the API's summary of one."""
from __future__ import annotations

import datetime

import pytest

from novalite import objects
from novalite.api.openstack.compute.views import instance_usage_audit_log as view
from novalite.compute import usage_audit

D = datetime.datetime


@pytest.mark.parametrize('unit,before,period', [
    ('month', D(2026, 11, 25, 21, 0), (D(2026, 10, 1), D(2026, 11, 1))),
    ('month', D(2026, 11, 1), (D(2026, 9, 1), D(2026, 10, 1))),
    ('month', D(2026, 1, 10), (D(2025, 12, 1), D(2026, 1, 1))),
    ('month', D(2026, 1, 1), (D(2025, 11, 1), D(2025, 12, 1))),
    ('month@15', D(2026, 11, 25), (D(2026, 10, 15), D(2026, 11, 15))),
    ('month@15', D(2026, 11, 10), (D(2026, 9, 15), D(2026, 10, 15))),
    ('year', D(2026, 6, 1), (D(2025, 1, 1), D(2026, 1, 1))),
    ('year@3', D(2026, 2, 1), (D(2024, 3, 1), D(2025, 3, 1))),
    ('day', D(2026, 11, 25, 21), (D(2026, 11, 24), D(2026, 11, 25))),
    ('day@18', D(2026, 11, 25, 17), (D(2026, 11, 23, 18), D(2026, 11, 24, 18))),
    ('hour', D(2026, 11, 25, 21, 30), (D(2026, 11, 25, 20), D(2026, 11, 25, 21))),
    ('hour@45', D(2026, 11, 25, 21, 30), (D(2026, 11, 25, 19, 45),
                                          D(2026, 11, 25, 20, 45))),
])
def test_last_completed_audit_period(unit, before, period):
    assert usage_audit.last_completed_audit_period(unit, before) == period


def test_an_aware_time_counts_as_utc():
    before = D(2026, 11, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert usage_audit.last_completed_audit_period('day', before) == (
        D(2026, 10, 30), D(2026, 10, 31))


def _log(host: str, state: str, items: int, errors: int) -> objects.TaskLog:
    objects.register_all()
    return objects.TaskLog(host=host, state=state, task_items=items, errors=errors,
                           message='m-%s' % host)


def test_summary_counts_hosts_done_running_and_not_run():
    logs = [_log('a', 'DONE', 3, 1), _log('b', 'RUNNING', 2, 0)]
    body = view.audit_log(logs, {'a', 'b', 'c', 'd'}, D(2026, 10, 1), D(2026, 11, 1))
    assert body == {
        'period_beginning': '2026-10-01 00:00:00', 'period_ending': '2026-11-01 00:00:00',
        'num_hosts': 4, 'num_hosts_done': 1, 'num_hosts_running': 1,
        'num_hosts_not_run': 2, 'hosts_not_run': ['c', 'd'], 'total_instances': 5,
        'total_errors': 1, 'overall_status': '1 of 4 hosts done. 1 errors.',
        'log': {'a': {'state': 'DONE', 'instances': 3, 'errors': 1, 'message': 'm-a'},
                'b': {'state': 'RUNNING', 'instances': 2, 'errors': 0,
                      'message': 'm-b'}}}


def test_summary_all_done():
    body = view.audit_log([_log('a', 'DONE', 0, 0)], {'a'}, D(2026, 10, 1), D(2026, 11, 1))
    assert body['overall_status'] == 'ALL hosts done. 0 errors.'
