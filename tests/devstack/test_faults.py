"""Faults the stack survives: the bus dropping mid-burst, a compute killed mid-build,
Placement down. End states are checked in the Compute API and in Placement."""
from __future__ import annotations

import threading
import time

from tests.devstack import clients

# Ten-server bursts on top of the other tests' servers must not hit the quota. A build
# retries what fails (Placement down, the scheduler gone) for 20 s, not the default
# 5 minutes, so that a build Placement stays away from ends in ERROR within a test.
STACK = {'conf': {'quota': {'instances': 100, 'cores': 200, 'ram': 1024 * 1024},
                  'conductor': {'build_retry_timeout': 20}}}
SETTLE_TIMEOUT = 120


def where_stuck(stack, server_id: str) -> str:
    """Which hop holds a server that never settled, from the databases' point of view."""
    if stack.query('api', 'SELECT id FROM build_requests WHERE instance_uuid = :u',
                   u=server_id):
        return ('still a BuildRequest: no conductor created the instance (the cast '
                'api->conductor or the call conductor->scheduler was lost)')
    for cell in ('cell1', 'cell1_cell0'):
        rows = stack.query(cell, 'SELECT host, vm_state, task_state FROM instances '
                           'WHERE uuid = :u', u=server_id)
        if rows:
            row = rows[0]
            return ('instance in %s on host %s, vm_state %s, task_state %s (%s)' % (
                cell, row.host, row.vm_state, row.task_state,
                'the cast conductor->compute or the compute build was lost'
                if row.task_state in (None, 'scheduling') else 'the compute build stalled'))
    return 'neither a BuildRequest nor an instance'


def assert_settled(stack, views: dict) -> None:
    stuck = {sid: where_stuck(stack, sid) for sid, view in views.items()
             if view['OS-EXT-STS:vm_state'] not in clients.SETTLED_STATES}
    assert not stuck, 'servers still in BUILD after %ss: %s' % (SETTLE_TIMEOUT, stuck)
    for sid, view in views.items():
        allocs = clients.allocations(stack, sid)
        if view['status'] == 'ACTIVE':
            assert len(allocs) == 1, (sid, allocs)
        else:
            assert view['status'] == 'ERROR', view
            assert view.get('fault', {}).get('message'), 'ERROR without a fault: %s' % view
            assert allocs == {}, 'ERROR server %s still holds %s' % (sid, allocs)


def assert_boots(stack, name: str) -> None:
    """The stack still works: a new server goes ACTIVE."""
    sid = clients.boot(stack, name)
    view = clients.wait_settled(stack, [sid], SETTLE_TIMEOUT)[sid]
    assert view['status'] == 'ACTIVE', (view.get('fault'), where_stuck(stack, sid))
    clients.delete_all(stack, [sid])


def test_burst_of_ten_boots_while_the_bus_drops_connections(stack):
    ids: list[str] = []
    errors: list[BaseException] = []

    def burst() -> None:
        try:
            for i in range(10):
                ids.append(clients.boot(stack, 'burst-%d' % i))
                time.sleep(0.3)
        except BaseException as exc:
            errors.append(exc)

    booter = threading.Thread(target=burst)
    booter.start()
    stack.wait_for(lambda: len(ids) >= 3 or errors, 60, 'the first boots of the burst')
    stack.close_bus_connections()
    closed_after = len(ids)
    booter.join(120)
    assert not errors, errors
    assert len(ids) == 10 and closed_after < 10, (len(ids), closed_after)

    views = clients.wait_settled(stack, ids, SETTLE_TIMEOUT)
    print('\nburst (connections closed after %d boots): %s' % (
        closed_after, sorted(v['status'] for v in views.values())))
    assert_settled(stack, views)
    assert_boots(stack, 'after-burst')
    clients.delete_all(stack, ids)
    for sid in ids:
        assert clients.allocations(stack, sid) == {}


def test_compute_killed_during_a_build(stack):
    stack.reconfigure('compute-hostA', {'fake_driver': {'spawn_seconds': 5}})
    stack.restart('compute-hostA')
    try:
        sid = clients.boot(stack, 'killed-build', availability_zone='nova:hostA')
        stack.wait_for(lambda: clients.server(stack, sid)['OS-EXT-STS:task_state']
                       == 'spawning', 60, 'the build to reach spawning on hostA', 0.1)
        stack.kill('compute-hostA')
        stack.start('compute-hostA')

        view = clients.wait_settled(stack, [sid], SETTLE_TIMEOUT)[sid]
        assert view['OS-EXT-SRV-ATTR:host'] == 'hostA'
        # Issue 20: a build a compute restart interrupted is re-driven when the cloud
        # has room (here on hostA again, the host it was asked for), not put in ERROR.
        assert view['status'] == 'ACTIVE', (view.get('fault'), where_stuck(stack, sid))
        assert_settled(stack, {sid: view})
        clients.delete_all(stack, [sid])
        assert clients.allocations(stack, sid) == {}
    finally:
        stack.reconfigure('compute-hostA', {'fake_driver': {'spawn_seconds': 0}})
        stack.restart('compute-hostA')
    assert_boots(stack, 'after-kill')


def test_boot_while_placement_is_down(stack):
    # Placement stays down for longer than the build retries ([conductor]
    # build_retry_timeout): the build ends in ERROR, with a fault naming Placement.
    stack.stop_placement()
    try:
        sid = clients.boot(stack, 'no-placement')
        view = clients.wait_settled(stack, [sid], SETTLE_TIMEOUT)[sid]
        assert view['status'] == 'ERROR', (view, where_stuck(stack, sid))
        message = view['fault']['message']
        print('\nfault of the boot without Placement: %r' % message)
        assert 'placement' in message.lower(), message
        assert any(word in message.lower() for word in ('unreachable', 'unavailable',
                                                        'connect')), message
        assert not stack.query('api', 'SELECT id FROM build_requests WHERE '
                               'instance_uuid = :u', u=sid)
    finally:
        stack.start_placement()
    assert clients.allocations(stack, sid) == {}
    clients.delete_all(stack, [sid])
    # As in Nova, the instance mapping stays until deleted rows are archived.
    assert_boots(stack, 'after-placement')
