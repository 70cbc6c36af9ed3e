"""Each way a build fails on its host (``compute/build.py``) leaves the state the module
promises: the claim aborted, the allocation deleted, the guest gone, and either the
build handed back to the conductor (SCHEDULING, no host) or, when rescheduling cannot
help, the instance in ERROR with a fault. A build that lost its instance to a delete
or to another build touches nothing that is no longer its own."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import build, delete
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import (
    HOST,
    Manager,
    RecordingNetworkAPI,
    ScriptedReportClient,
)

pytestmark = pytest.mark.usefixtures('no_pause')

VIF = {'id': 'port-made', 'active': True, 'preserve_on_delete': False}


@pytest.fixture
def host(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield Manager(ScriptedReportClient(cloud.reportclient), cctxt,
                      net_api=RecordingNetworkAPI(ports=[VIF])), cctxt


def _scheduled(mgr, cctxt):
    """An instance the conductor handed to this host: allocated here, SCHEDULING, its
    build event started."""
    instance = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                            task_state='scheduling')
    hostdoubles.start_action(cctxt, instance.uuid, 'create')
    objects.InstanceActionEvent.event_start(cctxt, instance.uuid, build.BUILD_EVENT,
                                            host=HOST)
    return instance


def _req(networks=None):
    return build.BuildRequestArgs(
        image=None, request_spec=None,
        filter_properties={'retry': {'num_attempts': 1, 'hosts': [[HOST, HOST]]}},
        admin_password=None, injected_files=[], requested_networks=networks or [],
        node=HOST, host_list=[])


def _failing(error):
    def spawn(*args, **kwargs):
        raise error
    return spawn


def _build_event(cctxt, instance_uuid):
    (action,) = objects.InstanceActionList.get_by_instance_uuid(cctxt, instance_uuid)
    (event,) = [e for e in objects.InstanceActionEventList.get_by_action(cctxt, action.id)
                if e.event == build.BUILD_EVENT]
    return event


def _assert_nothing_left_here(mgr, cctxt, instance):
    assert instance.uuid not in mgr.driver.list_instance_uuids()
    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}
    assert mgr.reportclient.called('delete_allocation_for_instance') == [(instance.uuid,)]


def _assert_rescheduled(mgr, cctxt, instance, reason):
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host, saved.node) == (
        'building', 'scheduling', None, None)
    (sent,) = mgr.compute_task_api.builds
    assert [i.uuid for i in sent['instances']] == [instance.uuid]
    retry = sent['filter_properties']['retry']
    assert retry['hosts'] == [[HOST, HOST]]
    assert retry['failures'] == [[HOST, retry['exc_reason']]]
    assert reason in retry['exc_reason']


# -- failures the next host may not have: rescheduled ------------------------------------

def test_a_spawn_failure_frees_the_host_and_hands_the_build_back(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    _assert_nothing_left_here(mgr, cctxt, instance)
    _assert_rescheduled(mgr, cctxt, instance, 'RuntimeError: disk on fire')
    event = _build_event(cctxt, instance.uuid)
    assert event.result == 'Error' and 'disk on fire' in event.details
    # The BuildFailureWeigher's count.
    assert mgr.rt.compute_nodes[HOST].stats['failed_builds'] == '1'


def test_an_image_that_cannot_be_downloaded_is_tried_on_another_host(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(exception.GlanceConnectionFailed(server='glance',
                                                                 reason='refused'))

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    _assert_nothing_left_here(mgr, cctxt, instance)
    _assert_rescheduled(mgr, cctxt, instance, 'Connection to glance host glance failed')


def test_a_claim_the_host_cannot_take_hands_the_build_back(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    instance.flavor.memory_mb = 10 ** 7

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}
    assert instance.uuid not in mgr.rt.tracked
    _assert_rescheduled(mgr, cctxt, instance, 'Insufficient compute resources')


def test_the_ports_allocated_before_a_failed_spawn_are_released(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))

    build.build_and_run_instance(mgr, cctxt, instance, _req([{'network_id': 'net-1'}]))

    assert mgr.network_api.released == [(['port-made'], [])]
    _assert_rescheduled(mgr, cctxt, instance, 'disk on fire')


def test_a_guest_that_cannot_be_destroyed_still_leaves_no_claim_or_allocation(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))
    mgr.driver.destroy = _failing(RuntimeError('hypervisor gone'))

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}
    _assert_rescheduled(mgr, cctxt, instance, 'disk on fire')


def test_an_allocation_placement_will_not_delete_does_not_stop_the_reschedule(host):
    """Documented: a delete frees it again, or the resource tracker's next run does."""
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))
    mgr.reportclient.fail['delete_allocation_for_instance'] = [
        exception.PlacementAPIConnectFailure(reason='refused')] * (delete.RETRIES + 1)

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert len(mgr.reportclient.called('delete_allocation_for_instance')) == \
        delete.RETRIES + 1
    assert instance.uuid not in mgr.rt.tracked
    _assert_rescheduled(mgr, cctxt, instance, 'disk on fire')


def test_a_build_event_that_cannot_be_finished_does_not_stop_the_reschedule(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                            task_state='scheduling')  # no action record
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    _assert_nothing_left_here(mgr, cctxt, instance)
    _assert_rescheduled(mgr, cctxt, instance, 'disk on fire')


# -- failures another host would have too: ERROR --------------------------------------

def test_neutron_failing_ends_the_build_in_error_without_a_reschedule(host):
    mgr, cctxt = host
    mgr.network_api.allocate_error = exception.NeutronConnectionFailed(
        server='neutron', reason='refused')
    instance = _scheduled(mgr, cctxt)

    build.build_and_run_instance(mgr, cctxt, instance, _req([{'network_id': 'net-1'}]))

    assert mgr.compute_task_api.builds == []
    saved = hostdoubles.stored(cctxt, instance.uuid)
    # No host's, as Nova's: a delete is local, allocation healing claims nothing for it.
    assert (saved.vm_state, saved.task_state, saved.host, saved.node) == (
        'error', None, None, None)
    assert 'Failed to allocate the network(s) with Neutron, not rescheduling' in \
        hostdoubles.fault(cctxt, instance.uuid)
    _assert_nothing_left_here(mgr, cctxt, instance)
    assert _build_event(cctxt, instance.uuid).result == 'Error'


def test_an_error_for_an_instance_deleted_meanwhile_is_not_raised(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    objects.Instance.get_by_uuid(cctxt, instance.uuid).destroy()

    build._error(mgr, cctxt, instance, exception.BuildAbortException(
        instance_uuid=instance.uuid, reason='no network'))

    assert hostdoubles.stored(cctxt, instance.uuid).deleted


# -- the instance is no longer this build's ----------------------------------------------

def _meanwhile(mgr, cctxt, instance, change):
    """Spawn succeeds, and ``change`` happens to the stored instance meanwhile."""
    real_spawn = mgr.driver.spawn

    def spawn(*args, **kwargs):
        real_spawn(*args, **kwargs)
        change(objects.Instance.get_by_uuid(cctxt, instance.uuid))
    mgr.driver.spawn = spawn


def _delete_started(stored):
    stored.task_state = 'deleting'
    stored.save()


def test_a_delete_during_the_spawn_ends_the_build_as_deleted(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    _meanwhile(mgr, cctxt, instance, _delete_started)

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    _assert_nothing_left_here(mgr, cctxt, instance)
    assert mgr.compute_task_api.builds == []
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'deleting'
    assert 'failed_builds' not in (mgr.rt.compute_nodes[HOST].stats or {})


def test_a_record_deleted_during_the_spawn_ends_the_build_as_deleted(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    _meanwhile(mgr, cctxt, instance, lambda stored: stored.destroy())

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    _assert_nothing_left_here(mgr, cctxt, instance)
    assert mgr.compute_task_api.builds == []


def _taken_over(stored):
    stored.vm_state, stored.task_state, stored.host = 'active', None, 'otherhost'
    stored.save()


def test_a_build_taken_over_during_the_spawn_leaves_the_allocation_to_the_winner(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    _meanwhile(mgr, cctxt, instance, _taken_over)

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert instance.uuid not in mgr.driver.list_instance_uuids()
    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)
    assert mgr.reportclient.called('delete_allocation_for_instance') == []
    assert mgr.compute_task_api.builds == []
    assert hostdoubles.stored(cctxt, instance.uuid).host == 'otherhost'
    # Neither a failure nor a success of this host's.
    assert 'failed_builds' not in (mgr.rt.compute_nodes[HOST].stats or {})


def test_a_taken_over_build_whose_guest_cannot_be_destroyed_still_drops_its_claim(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    _meanwhile(mgr, cctxt, instance, _taken_over)
    mgr.driver.destroy = _failing(RuntimeError('hypervisor gone'))

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)


# -- start-up and periodic recovery ------------------------------------------------------

def test_one_instance_that_cannot_be_recovered_does_not_stop_the_others(host, monkeypatch):
    mgr, cctxt = host
    stuck = hostdoubles.instance_on_host(mgr, cctxt, task_state='rebooting')
    building = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                            task_state='spawning')

    def recover_instance(mgr, context, instance):
        raise messaging.MessagingTimeout('conductor gone')
    monkeypatch.setattr(build.power_sync, 'recover_instance', recover_instance)

    build.recover_interrupted_builds(mgr, cctxt)

    (sent,) = mgr.compute_task_api.builds
    assert [i.uuid for i in sent['instances']] == [building.uuid]
    assert hostdoubles.stored(cctxt, stuck.uuid).task_state == 'rebooting'
    assert mgr.instance_lock(stuck.uuid).acquire(blocking=False)


def test_an_orphaned_build_deleted_before_it_is_read_again_is_skipped(host, monkeypatch):
    mgr, cctxt = host
    orphan = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                          task_state='spawning')

    def get_by_uuid(context, instance_uuid, **kwargs):
        raise exception.InstanceNotFound(instance_id=instance_uuid)
    monkeypatch.setattr(objects.Instance, 'get_by_uuid', get_by_uuid)

    assert build.redrive_orphaned_builds(mgr, cctxt) == []
    assert mgr.compute_task_api.builds == []
    assert mgr.instance_lock(orphan.uuid).acquire(blocking=False)


def test_an_orphaned_build_that_cannot_be_read_is_tried_again_next_run(host, monkeypatch):
    mgr, cctxt = host
    orphan = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                          task_state='spawning')
    real = objects.Instance.get_by_uuid
    failures = [messaging.MessagingTimeout('conductor gone')]

    def get_by_uuid(context, instance_uuid, **kwargs):
        if failures:
            raise failures.pop(0)
        return real(context, instance_uuid, **kwargs)
    monkeypatch.setattr(objects.Instance, 'get_by_uuid', get_by_uuid)

    assert build.redrive_orphaned_builds(mgr, cctxt) == []
    assert hostdoubles.stored(cctxt, orphan.uuid).host == HOST
    assert build.redrive_orphaned_builds(mgr, cctxt) == [orphan.uuid]


def test_a_build_that_outlived_its_timeout_ends_in_error_with_nothing_left(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    build._record_network_requests(instance, [{'network_id': 'net-1', 'port_id': 'port-u'}])
    instance.task_state = 'spawning'
    instance.save()
    mgr.driver.spawn(cctxt, instance, None, [], None, {})
    running = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                           task_state='spawning')

    with mgr.instance_lock(running.uuid):
        build.fail_stale_builds(mgr, cctxt, timeout=0)

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('error', None, None)
    assert 'did not finish within 0 seconds' in hostdoubles.fault(cctxt, instance.uuid)
    assert mgr.network_api.released == [([], ['port-u'])]
    assert instance.uuid not in mgr.driver.list_instance_uuids()
    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}
    assert mgr.compute_task_api.builds == []
    # A build still holding its lock is left to finish on its own.
    assert hostdoubles.stored(cctxt, running.uuid).vm_state == 'building'


def test_a_delete_before_the_claim_spawns_nothing_and_frees_the_allocation(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    _delete_started(objects.Instance.get_by_uuid(cctxt, instance.uuid))
    spawned = []
    mgr.driver.spawn = lambda *args, **kwargs: spawned.append(args)

    build.build_and_run_instance(mgr, cctxt, instance, _req())

    assert spawned == []
    _assert_nothing_left_here(mgr, cctxt, instance)
    assert mgr.compute_task_api.builds == []
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'deleting'


def test_a_first_attempt_without_retry_information_names_this_host_as_tried(host):
    mgr, cctxt = host
    instance = _scheduled(mgr, cctxt)
    mgr.driver.spawn = _failing(RuntimeError('disk on fire'))
    req = _req()
    req.filter_properties = {}

    build.build_and_run_instance(mgr, cctxt, instance, req)

    (sent,) = mgr.compute_task_api.builds
    assert sent['filter_properties']['retry']['hosts'] == [[HOST, HOST]]
