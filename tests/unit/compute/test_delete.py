"""A delete always finishes: Placement, the conductor or the bus failing for a moment
is retried, the allocation goes before the record, and a delete an outage outlasted
stays DELETING until the host's pending delete task finishes it."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception
from novalite.compute import delete
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import FlakyReportClient, Manager

pytestmark = pytest.mark.usefixtures('no_pause')


@pytest.fixture
def host(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield Manager(FlakyReportClient(cloud.reportclient), cctxt), cctxt


def _unreachable():
    return exception.PlacementAPIConnectFailure(reason='connection refused')


def test_a_placement_failure_during_delete_is_retried_then_the_delete_finishes(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    mgr.reportclient.failures = [_unreachable(), exception.PlacementAPIServerError(
        reason='DELETE /allocations returned 503')]
    delete.terminate_or_leave_pending(mgr, cctxt, instance)
    assert mgr.reportclient.deletes == 3
    assert hostdoubles.stored(cctxt, instance.uuid).deleted
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}
    assert instance.uuid not in mgr.rt.tracked


def test_a_database_failure_behind_the_conductor_is_retried(host, monkeypatch):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    real_destroy = instance.destroy
    failures = [messaging.RemoteError('DBConnectionError', 'Too many connections'),
                messaging.MessagingTimeout('no reply')]

    def destroy():
        if failures:
            raise failures.pop(0)
        real_destroy()
    monkeypatch.setattr(instance, 'destroy', destroy)
    delete.terminate_or_leave_pending(mgr, cctxt, instance)
    assert failures == []
    assert hostdoubles.stored(cctxt, instance.uuid).deleted


def test_a_delete_placement_fails_throughout_keeps_the_record_then_the_task_ends_it(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    mgr.reportclient.failures = [_unreachable()] * (delete.RETRIES + 1)
    delete.terminate_or_leave_pending(mgr, cctxt, instance)
    # Not gone while it holds resources: the server would answer 404 with them held.
    left = hostdoubles.stored(cctxt, instance.uuid)
    assert not left.deleted and left.task_state == 'deleting'
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)

    assert delete.retry_pending_deletes(mgr, cctxt, grace=0) == [instance.uuid]
    assert hostdoubles.stored(cctxt, instance.uuid).deleted
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}


def test_the_pending_delete_task_leaves_deletes_that_run_or_are_recent(host):
    mgr, cctxt = host
    running = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    recent = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    active = hostdoubles.instance_on_host(mgr, cctxt)
    with mgr.instance_lock(running.uuid):
        assert delete.retry_pending_deletes(mgr, cctxt, grace=0) == [recent.uuid]
    recent2 = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    assert delete.retry_pending_deletes(mgr, cctxt, grace=3600) == []
    assert not hostdoubles.stored(cctxt, recent2.uuid).deleted
    assert not hostdoubles.stored(cctxt, running.uuid).deleted
    assert not hostdoubles.stored(cctxt, active.uuid).deleted


def test_deleting_what_is_already_gone_succeeds(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    delete.terminate_instance(mgr, cctxt, instance)
    # The delete the bus delivered late, after the pending delete task did the work.
    delete.terminate_or_leave_pending(mgr, cctxt, instance)
    assert hostdoubles.stored(cctxt, instance.uuid).deleted


def test_a_failure_that_is_no_outage_is_not_retried(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='deleting')
    mgr.reportclient.failures = [messaging.RemoteError('KeyError', 'a bug')]
    with pytest.raises(messaging.RemoteError):
        delete.terminate_or_leave_pending(mgr, cctxt, instance)
    assert mgr.reportclient.deletes == 1


@pytest.mark.parametrize('failure', [
    exception.InstanceActionNotFound(request_id='r', instance_uuid='i'),
    exception.PlacementAPIConnectFailure(reason='connection refused')])
def test_a_step_that_fails_for_good_is_no_error_with_a_traceback(failure, caplog):
    def step():
        raise failure
    with pytest.raises(type(failure)):
        delete.retried(step, 'A step')
    assert [r for r in caplog.records if r.levelname == 'ERROR'] == []
