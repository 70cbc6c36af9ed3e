"""Builds that were lost (a cast the bus dropped, a conductor or scheduler that died)
are built again, and end ACTIVE when the cloud has room; only a build lost more than
``[scheduler] max_attempts`` times ends in ERROR, with a fault. Nothing stays in BUILD
and no allocation outlives a server.

``LostCast`` is a test double for a broker that drops a cast: it accepts the message
and delivers nothing. ``DyingScheduler`` is one for a scheduler killed mid-call.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import oslo_messaging as messaging

from novalite import context as nl_context
from novalite import objects
from novalite.compute import api as compute_api
from novalite.conductor import manager as conductor_manager
from novalite.conductor.tasks import build, lost_builds
from novalite.conf import CONF
from novalite.objects.build_request import Ownership


class LostCast:
    """Swallows every cast made through it."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class DirectTaskAPI:
    """Runs the conductor's task in this thread instead of casting to it."""

    def __init__(self, manager):
        self.manager = manager

    def schedule_and_build_instances(self, context, **kwargs):
        self.manager.schedule_and_build_instances(context, **kwargs)


class DyingScheduler:
    """The real scheduler client, whose first ``fail`` calls time out as a call to a
    scheduler killed mid-call does (after claiming, when ``claim_first``)."""

    def __init__(self, fail: int, claim_first: bool = False) -> None:
        self.real = build.Dependencies().query_client
        self.fail = fail
        self.claim_first = claim_first
        self.calls = 0

    def select_destinations(self, *args, **kwargs):
        self.calls += 1
        if self.calls <= self.fail:
            if self.claim_first:
                self.real.select_destinations(*args, **kwargs)
            raise messaging.MessagingTimeout('the scheduler did not answer')
        return self.real.select_destinations(*args, **kwargs)


@contextlib.contextmanager
def lost_after(seconds: int) -> Iterator[None]:
    """Builds waiting longer than ``seconds`` count as lost (an unclaimed instance's
    wait for a conductor retrying its claim, ``build_retry_timeout``, is none here)."""
    CONF.set_override('build_request_timeout', seconds, group='conductor')
    CONF.set_override('build_retry_timeout', 0, group='conductor')
    try:
        time.sleep(seconds + 0.2)
        yield
    finally:
        CONF.clear_override('build_request_timeout', group='conductor')
        CONF.clear_override('build_retry_timeout', group='conductor')


def _flavor(name):
    flavor = objects.Flavor(nl_context.get_admin_context(), name=name, flavorid=name,
                            memory_mb=128, vcpus=1, root_gb=1, ephemeral_gb=0, swap=0)
    flavor.create()
    return flavor


def _user_context():
    return nl_context.RequestContext(user_id='lost', project_id='lost-project',
                                     roles=['member', 'reader'])


def _allocations(stack, uuid):
    return stack.placement_get('/allocations/%s' % uuid)['allocations']


def _status(stack, uuid):
    return stack.request('GET', '/servers/%s' % uuid).json()['server']['status']


def _assert_error_without_allocation(stack, uuid, fault_text):
    server = stack.request('GET', '/servers/%s' % uuid).json()['server']
    assert server['status'] == 'ERROR'
    assert fault_text in server['fault']['message']
    assert _allocations(stack, uuid) == {}
    _delete(stack, uuid)


def _delete(stack, uuid):
    assert stack.request('DELETE', '/servers/%s' % uuid).status_code == 204
    stack.wait_for_deleted(uuid)
    assert _allocations(stack, uuid) == {}


def test_build_request_no_conductor_took_is_built_again(stack):
    api = compute_api.API(compute_task_api=LostCast())
    (instance,), _ = api.create(_user_context(), _flavor('m1.lost1'), stack.image['id'],
                                name='lost1')
    assert _status(stack, instance.uuid) == 'BUILD'

    with lost_after(1):
        redriven = lost_builds.redrive_lost_build_requests(
            nl_context.get_admin_context(), build.Dependencies())
    assert redriven == 1
    server = stack.wait_for_status(instance.uuid, ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert server['tenant_id'] == 'lost-project' and server['user_id'] == 'lost'
    assert len(_allocations(stack, instance.uuid)) == 1
    _delete(stack, instance.uuid)


def test_build_lost_max_attempts_times_goes_to_error_without_allocation(stack):
    api = compute_api.API(compute_task_api=LostCast())
    (instance,), _ = api.create(_user_context(), _flavor('m1.lost1b'), stack.image['id'],
                                name='lost1b')
    CONF.set_override('max_attempts', 1, group='scheduler')
    try:
        with lost_after(1):
            assert lost_builds.redrive_lost_build_requests(
                nl_context.get_admin_context(), build.Dependencies()) == 0
    finally:
        CONF.clear_override('max_attempts', group='scheduler')
    _assert_error_without_allocation(stack, instance.uuid, 'The build was lost 1 times')


def test_conductor_died_after_scheduling_frees_the_claim_and_builds_again(stack):
    """A conductor took the build and its scheduler claimed, then it died: the re-drive
    frees the dead attempt's claim before scheduling again (one allocation in the end)."""
    api = compute_api.API(compute_task_api=LostCast())
    ctx = _user_context()
    (instance,), _ = api.create(ctx, _flavor('m1.lost3'), stack.image['id'], name='lost3')
    build_request = objects.BuildRequest.get_by_instance_uuid(ctx, instance.uuid)
    assert build_request.take() is Ownership.CURRENT
    spec = objects.RequestSpec.get_by_instance_uuid(ctx, instance.uuid)
    build.Dependencies().query_client.select_destinations(
        ctx, spec, [instance.uuid], return_objects=True, return_alternates=True)
    assert len(_allocations(stack, instance.uuid)) == 1

    with lost_after(1):
        assert lost_builds.redrive_lost_build_requests(
            nl_context.get_admin_context(), build.Dependencies()) == 1
    server = stack.wait_for_status(instance.uuid, ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert len(_allocations(stack, instance.uuid)) == 1

    # The dead attempt, had it only been slow, finds itself stale and lets go.
    assert build_request.take() is Ownership.GONE
    _delete(stack, instance.uuid)


def test_slow_attempt_lets_go_when_the_build_was_redriven(stack):
    ctx = _user_context()
    api = compute_api.API(compute_task_api=LostCast())
    (instance,), _ = api.create(ctx, _flavor('m1.lost4'), stack.image['id'], name='lost4')
    slow = objects.BuildRequest.get_by_instance_uuid(ctx, instance.uuid)
    assert slow.take() is Ownership.CURRENT
    current = objects.BuildRequest.get_by_instance_uuid(ctx, instance.uuid)
    assert current.redrive()
    assert slow.take() is Ownership.STALE
    assert slow.destroy_if_current() is Ownership.STALE
    assert current.take() is Ownership.CURRENT
    assert stack.request('DELETE', '/servers/%s' % instance.uuid).status_code == 204
    # The current attempt's conductor is asked to finish the delete; here it is gone.
    assert current.take() is Ownership.DELETE_REQUESTED
    assert _status(stack, instance.uuid) == 'BUILD'
    with lost_after(1):
        lost_builds.redrive_lost_build_requests(nl_context.get_admin_context(),
                                                build.Dependencies())
    stack.wait_for_deleted(instance.uuid)


def test_delete_while_a_conductor_schedules_answers_404_only_without_allocation(stack):
    """The leak users know from Nova: the API deleted the build request, then the
    scheduler's claim landed. Now the conductor holding it finishes the delete."""
    ctx = _user_context()
    held = []

    class DeleteDuringScheduling(DyingScheduler):
        def select_destinations(self, *args, **kwargs):
            result = self.real.select_destinations(*args, **kwargs)
            held.append(stack.request('DELETE', '/servers/%s' % args[2][0]).status_code)
            held.append(stack.request('GET', '/servers/%s' % args[2][0]).status_code)
            return result

    task_manager = conductor_manager.ComputeTaskManager(
        query_client=DeleteDuringScheduling(0))
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(ctx, _flavor('m1.lost5'), stack.image['id'], name='lost5')
    assert held == [204, 200], 'the server shows until its conductor lets it go'
    assert stack.request('GET', '/servers/%s' % instance.uuid).status_code == 404
    assert _allocations(stack, instance.uuid) == {}


def test_scheduler_dying_mid_call_is_retried(stack):
    ctx = _user_context()
    scheduler = DyingScheduler(fail=2, claim_first=True)
    task_manager = conductor_manager.ComputeTaskManager(query_client=scheduler)
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(ctx, _flavor('m1.lost6'), stack.image['id'], name='lost6')
    assert scheduler.calls == 3
    server = stack.wait_for_status(instance.uuid, ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert len(_allocations(stack, instance.uuid)) == 1
    _delete(stack, instance.uuid)


def test_scheduler_down_past_the_deadline_ends_in_error(stack):
    ctx = _user_context()
    CONF.set_override('build_retry_timeout', 2, group='conductor')
    try:
        task_manager = conductor_manager.ComputeTaskManager(
            query_client=DyingScheduler(fail=100, claim_first=True))
        api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
        (instance,), _ = api.create(ctx, _flavor('m1.lost7'), stack.image['id'],
                                    name='lost7')
    finally:
        CONF.clear_override('build_retry_timeout', group='conductor')
    _assert_error_without_allocation(stack, instance.uuid, 'did not answer')


def test_instance_no_compute_claimed_is_scheduled_again(stack):
    ctx = _user_context()
    task_manager = conductor_manager.ComputeTaskManager(compute_rpcapi=LostCast())
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(ctx, _flavor('m1.lost2'), stack.image['id'], name='lost2')
    assert len(_allocations(stack, instance.uuid)) == 1
    assert _status(stack, instance.uuid) == 'BUILD'

    with lost_after(1):
        assert lost_builds.redrive_unclaimed_instances(nl_context.get_admin_context(),
                                                       build.Dependencies()) == 1
    server = stack.wait_for_status(instance.uuid, ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert len(_allocations(stack, instance.uuid)) == 1
    _delete(stack, instance.uuid)


def test_instance_never_claimed_max_attempts_times_goes_to_error(stack):
    ctx = _user_context()
    task_manager = conductor_manager.ComputeTaskManager(compute_rpcapi=LostCast())
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(ctx, _flavor('m1.lost8'), stack.image['id'], name='lost8')
    CONF.set_override('max_attempts', 1, group='scheduler')
    try:
        with lost_after(1):
            assert lost_builds.redrive_unclaimed_instances(
                nl_context.get_admin_context(), task_manager.deps) == 0
    finally:
        CONF.clear_override('max_attempts', group='scheduler')
    _assert_error_without_allocation(stack, instance.uuid, 'no compute host took the build')


def test_a_build_just_redriven_is_not_driven_twice(stack):
    """The lost-build check re-drove a build request, whose instance then waits for its
    host; in the same run, its check of unclaimed instances took the API's create time
    for that instance's age and re-drove it again: two hosts built it, and the loser's
    cleanup freed the winner's allocation."""
    api = compute_api.API(compute_task_api=LostCast())
    (instance,), _ = api.create(_user_context(), _flavor('m1.lost9'), stack.image['id'],
                                name='lost9')
    with lost_after(1):
        admin = nl_context.get_admin_context()
        assert lost_builds.redrive_lost_build_requests(
            admin, build.Dependencies(_compute=LostCast())) == 1
        assert lost_builds.redrive_unclaimed_instances(admin, build.Dependencies()) == 0
    with lost_after(1):
        assert lost_builds.redrive_unclaimed_instances(admin, build.Dependencies()) == 1
    server = stack.wait_for_status(instance.uuid, ('ACTIVE', 'ERROR'))
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert len(_allocations(stack, instance.uuid)) == 1
    _delete(stack, instance.uuid)
