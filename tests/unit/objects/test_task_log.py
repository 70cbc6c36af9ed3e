"""TaskLog: a run begun once per host and period, ended once begun; the window query of
the usage audit."""
from __future__ import annotations

import datetime

import pytest

from novalite import context as nl_context
from novalite import exception, objects

BEGIN = datetime.datetime(2026, 10, 1)
END = datetime.datetime(2026, 11, 1)


def _task(cctxt, host='h1', **values):
    return objects.TaskLog(cctxt, task_name='instance_usage_audit', period_beginning=BEGIN,
                           period_ending=END, host=host, **values)


def test_begin_then_end_a_run(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        task = _task(cctxt, task_items=3, message='started')
        task.begin_task()
        # The bounds as a datetime or as the ISO text they cross RPC as.
        running = objects.TaskLog.get(cctxt, 'instance_usage_audit', BEGIN.isoformat(),
                                      END.isoformat(), 'h1')
        assert (running.state, running.task_items, running.message) == (
            'RUNNING', 3, 'started')
        task.errors = 1
        task.message = 'done'
        task.end_task()
        done = objects.TaskLog.get(cctxt, 'instance_usage_audit', BEGIN, END, 'h1')
        assert (done.state, done.errors, done.message) == ('DONE', 1, 'done')
        assert objects.TaskLog.get(cctxt, 'instance_usage_audit', BEGIN, END, 'h2') is None


def test_a_second_begin_is_refused_and_an_end_needs_a_begin(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        _task(cctxt, message='one').begin_task()
        with pytest.raises(exception.TaskAlreadyRunning):
            _task(cctxt, message='two').begin_task()
        with pytest.raises(exception.TaskNotRunning):
            _task(cctxt, host='h2', errors=0, message='').end_task()


def test_list_of_a_period_across_hosts(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        for host in ('h1', 'h2'):
            _task(cctxt, host=host, message=host).begin_task()
        other = objects.TaskLog(cctxt, task_name='instance_usage_audit',
                                period_beginning=END, period_ending=END, host='h3',
                                message='later')
        other.begin_task()
        found = objects.TaskLogList.get_all(cctxt, 'instance_usage_audit', BEGIN, END)
        assert sorted(t.host for t in found) == ['h1', 'h2']


def test_active_window_takes_instances_not_terminated_before_its_start(dbs):
    live, gone, elsewhere = (dbs.add_instance(h) for h in ('h1', 'h1', 'h2'))
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        for uuid in (live, gone, elsewhere):
            instance = objects.Instance.get_by_uuid(cctxt, uuid)
            instance.launched_at = BEGIN.replace(tzinfo=datetime.UTC)
            if uuid == gone:
                instance.terminated_at = (END - datetime.timedelta(days=1)).replace(
                    tzinfo=datetime.UTC)
            instance.save()
        objects.Instance.get_by_uuid(cctxt, gone).destroy()
        found = objects.InstanceList.get_active_by_window_joined(cctxt, BEGIN, END,
                                                                  host='h1')
        assert sorted(i.uuid for i in found) == sorted([live, gone])
        after = objects.InstanceList.get_active_by_window_joined(
            cctxt, END.isoformat(), None, host='h1')
        assert [i.uuid for i in after] == [live]
        before = objects.InstanceList.get_active_by_window_joined(
            cctxt, BEGIN - datetime.timedelta(days=30), BEGIN, host='h1')
        assert list(before) == []
