"""Builds whose next message the bus lost end in ERROR with a fault, never stuck in BUILD.

``LostCast`` is a test double for a broker that drops a cast: it accepts the message
and delivers nothing.
"""
from __future__ import annotations

import time

from novalite import context as nl_context
from novalite import objects
from novalite.compute import api as compute_api
from novalite.conductor import manager as conductor_manager
from novalite.conductor.tasks import lost_builds
from novalite.conf import CONF


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


def _flavor(ctx, name):
    flavor = objects.Flavor(ctx, name=name, flavorid=name, memory_mb=128, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0)
    flavor.create()
    return flavor


def _user_context():
    return nl_context.RequestContext(user_id='lost', project_id='lost-project',
                                     roles=['member', 'reader'])


def test_build_request_no_conductor_took_is_buried_in_cell0(stack):
    ctx = _user_context()
    flavor = _flavor(nl_context.get_admin_context(), 'm1.lost1')
    api = compute_api.API(compute_task_api=LostCast())
    (instance,), _ = api.create(ctx, flavor, stack.image['id'], name='lost1')
    assert stack.request('GET', '/servers/%s' % instance.uuid).json()['server'][
        'status'] == 'BUILD'

    CONF.set_override('build_request_timeout', 1, group='conductor')
    try:
        time.sleep(1.2)
        assert lost_builds.bury_lost_build_requests(nl_context.get_admin_context()) == 1
    finally:
        CONF.clear_override('build_request_timeout', group='conductor')
    server = stack.request('GET', '/servers/%s' % instance.uuid).json()['server']
    assert server['status'] == 'ERROR'
    assert 'No conductor took the build request' in server['fault']['message']
    assert stack.request('DELETE', '/servers/%s' % instance.uuid).status_code == 204


def test_instance_no_compute_claimed_goes_to_error_and_frees_its_allocation(stack):
    ctx = _user_context()
    flavor = _flavor(nl_context.get_admin_context(), 'm1.lost2')
    task_manager = conductor_manager.ComputeTaskManager(compute_rpcapi=LostCast())
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(ctx, flavor, stack.image['id'], name='lost2')
    allocations = stack.placement_get('/allocations/%s' % instance.uuid)['allocations']
    assert allocations, 'the scheduler should have claimed'
    assert stack.request('GET', '/servers/%s' % instance.uuid).json()['server'][
        'status'] == 'BUILD'

    CONF.set_override('build_request_timeout', 1, group='conductor')
    try:
        time.sleep(1.2)
        failed = lost_builds.fail_unclaimed_instances(nl_context.get_admin_context(),
                                                      task_manager.deps)
    finally:
        CONF.clear_override('build_request_timeout', group='conductor')
    assert failed == 1
    server = stack.request('GET', '/servers/%s' % instance.uuid).json()['server']
    assert server['status'] == 'ERROR'
    assert 'no compute host took the build' in server['fault']['message']
    assert stack.placement_get('/allocations/%s' % instance.uuid)['allocations'] == {}
    assert stack.request('DELETE', '/servers/%s' % instance.uuid).status_code == 204
    stack.wait_for_deleted(instance.uuid)
