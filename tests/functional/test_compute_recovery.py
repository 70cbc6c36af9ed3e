"""A compute host finishes what an outage or its own restart interrupted: a delete
Placement refused stays DELETING (the server and its allocation both there) until the
host's pending delete task ends it; a build its restart interrupted is scheduled again.
"""
from __future__ import annotations

import time

import pytest

from novalite import context as nl_context
from novalite import exception, objects, transient
from novalite.compute import build, delete, task_states, vm_states
from novalite.conf import CONF
from tests.unit.compute.hostdoubles import FlakyReportClient

VERSION = '2.47'


@pytest.fixture
def flavor(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.recovery', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    yield resp.json()['flavor']['id']
    stack.request('DELETE', '/flavors/%s' % resp.json()['flavor']['id'])


def _active(stack, flavor, name):
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': name, 'imageRef': stack.image['id'], 'flavorRef': flavor,
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                   version=VERSION)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


def _wait(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.05)


def test_a_delete_placement_refuses_stays_deleting_until_the_pending_task_ends_it(
        stack, flavor, monkeypatch):
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)
    monkeypatch.setattr(delete, 'RETRY_MAX_DELAY', 0)
    server = _active(stack, flavor, 'placement-down')
    server_id = server['id']
    svc = stack.computes[server['OS-EXT-SRV-ATTR:host']]
    mgr = svc.manager
    flaky = FlakyReportClient(mgr.reportclient, [
        exception.PlacementAPIConnectFailure(reason='connection refused')] * (
            delete.RETRIES + 1))
    monkeypatch.setattr(mgr, 'reportclient', flaky)

    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    _wait(lambda: flaky.deletes == delete.RETRIES + 1
          and not mgr.instance_lock(server_id).locked())
    shown = stack.request('GET', '/servers/%s' % server_id, version=VERSION)
    assert shown.status_code == 200
    assert shown.json()['server']['OS-EXT-STS:task_state'] == 'deleting'
    assert stack.placement_get('/allocations/%s' % server_id)['allocations']

    # Placement is back: the host's periodic task finishes the delete.
    CONF.set_override('pending_delete_grace', 0, group='compute')
    try:
        svc._call(mgr._retry_pending_deletes, nl_context.get_admin_context())
    finally:
        CONF.clear_override('pending_delete_grace', group='compute')
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 404
    assert stack.placement_get('/allocations/%s' % server_id)['allocations'] == {}


def test_a_build_a_restart_interrupted_is_scheduled_again(stack, flavor):
    server = _active(stack, flavor, 'restarted')
    server_id = server['id']
    svc = stack.computes[server['OS-EXT-SRV-ATTR:host']]
    # As the host finds it after a restart: BUILDING on it, spawning, no build running.
    instance = objects.Instance.get_by_uuid(nl_context.get_admin_context(), server_id)
    instance.vm_state = vm_states.BUILDING
    instance.task_state = task_states.SPAWNING
    instance.save()

    svc._call(build.recover_interrupted_builds, svc.manager,
              nl_context.get_admin_context())
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version=VERSION)
    assert server['status'] == 'ACTIVE', server.get('fault')
    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    assert len(allocations) == 1
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
    assert stack.placement_get('/allocations/%s' % server_id)['allocations'] == {}


def test_a_local_delete_placement_refuses_answers_503_and_keeps_the_server(
        stack, monkeypatch):
    """A server no compute host holds (here: buried in cell0, no room) is deleted by the
    API itself; with Placement unreachable it was deleted anyway, its allocation, had it
    one, left behind a 404. Now the delete is refused with 503 and nothing changes."""
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.nowhere', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    flavor_id = resp.json()['flavor']['id']
    assert stack.request('POST', '/flavors/%s/os-extra_specs' % flavor_id, json={
        'extra_specs': {'trait:CUSTOM_NOWHERE': 'required'}}).status_code == 200
    resp = stack.request('POST', '/servers', json={'server': {
        'name': 'no-room', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none'}}, version=VERSION)
    server_id = resp.json()['server']['id']
    server = stack.wait_for_status(server_id, ('ERROR',), version=VERSION)
    # A trait Placement does not know is no host's, not a scheduler failure to retry.
    assert 'Placement refused the request for allocation candidates' in \
        server['fault']['message'], server['fault']

    from novalite.scheduler.client import report

    def unreachable(self, context, consumer_uuid):
        raise exception.PlacementAPIConnectFailure(reason='connection refused')
    with monkeypatch.context() as patch:
        patch.setattr(report.SchedulerReportClient, 'delete_allocation_for_instance',
                      unreachable)
        resp = stack.request('DELETE', '/servers/%s' % server_id)
    assert resp.status_code == 503, resp.text
    (fault,) = resp.json().values()
    assert fault['code'] == 503 and 'Placement' in fault['message']
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 200

    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
    stack.request('DELETE', '/flavors/%s' % flavor_id)
