"""A build this host was running when its compute service stopped is cleaned up and
scheduled again at start-up, not failed; and a failed build never reschedules over a
delete that came meanwhile."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import build
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import HOST, FlakyReportClient, Manager, RecordingTaskAPI

REASON = 'the compute service on %s restarted during the build' % HOST


class RecordingNetworkAPI:
    """No Neutron; records which ports a release was told to keep."""

    def __init__(self):
        self.preserved: list[list[str]] = []

    def deallocate_for_instance(self, context, instance, network_info=None, preserve=()):
        self.preserved.append(list(preserve))


pytestmark = pytest.mark.usefixtures('no_pause')


@pytest.fixture
def host(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield Manager(FlakyReportClient(cloud.reportclient), cctxt,
                      net_api=RecordingNetworkAPI()), cctxt


def _building(mgr, cctxt, requests=()):
    instance = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                            task_state='spawning')
    if requests:
        build._record_network_requests(instance, list(requests))
        instance.save()
    mgr.driver.spawn(cctxt, instance, None, [], None, {})
    return instance


def test_a_build_a_restart_interrupted_is_scheduled_again(host):
    mgr, cctxt = host
    instance = _building(mgr, cctxt)
    assert instance.uuid in mgr.rt.tracked
    build.recover_interrupted_builds(mgr, cctxt)

    (sent,) = mgr.compute_task_api.builds
    assert [i.uuid for i in sent['instances']] == [instance.uuid]
    assert sent['host_lists'] == [[]] and sent['request_spec'] is None
    # The conductor reads the rest from the RequestSpec.
    assert sent['image'] is None and sent['requested_networks'] is None
    retry = sent['filter_properties']['retry']
    assert retry['failures'] == [[HOST, REASON]] and retry['num_attempts'] == 1
    assert retry['redrive'] is True
    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('building', 'scheduling',
                                                              None)
    # What the build left here is gone: guest, claim, allocation.
    assert instance.uuid not in mgr.driver.list_instance_uuids()
    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}


def test_the_recorded_networks_are_asked_again_and_the_users_ports_kept(host):
    mgr, cctxt = host
    requests = [{'network_id': 'net-1', 'port_id': None, 'fixed_ip': None, 'tag': None},
                {'network_id': 'net-2', 'port_id': 'port-user', 'fixed_ip': None,
                 'tag': 'eth1'}]
    instance = _building(mgr, cctxt, requests)
    build.recover_interrupted_builds(mgr, cctxt)
    (sent,) = mgr.compute_task_api.builds
    assert sent['requested_networks'] == [
        {'network_id': 'net-1'}, {'network_id': 'net-2', 'port_id': 'port-user',
                                  'tag': 'eth1'}]
    assert mgr.network_api.preserved == [['port-user']]
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'scheduling'


def test_a_build_that_cannot_go_back_to_the_conductor_ends_in_error(host):
    mgr, cctxt = host
    mgr.compute_task_api = RecordingTaskAPI(
        error=messaging.MessageDeliveryFailure('the bus is down'))
    instance = _building(mgr, cctxt)
    build.recover_interrupted_builds(mgr, cctxt)
    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid, expected_attrs=['fault'])
    assert (saved.vm_state, saved.task_state) == ('error', None)
    assert REASON in saved.fault.message
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}


def test_a_failed_build_is_not_rescheduled_over_a_delete(host):
    mgr, cctxt = host
    instance = _building(mgr, cctxt)
    deleting = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    deleting.task_state = 'deleting'
    deleting.save()
    req = build.BuildRequestArgs(image=None, request_spec=None, filter_properties={},
                                 admin_password=None, injected_files=[],
                                 requested_networks=[], node=HOST, host_list=[])
    build._reschedule(mgr, cctxt, instance, req, RuntimeError('spawn failed'))
    assert mgr.compute_task_api.builds == []
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'deleting'


def test_a_build_no_one_works_on_any_more_is_scheduled_again(host):
    mgr, cctxt = host
    orphan = _building(mgr, cctxt)
    running = _building(mgr, cctxt)
    active = hostdoubles.instance_on_host(mgr, cctxt)
    with mgr.instance_lock(running.uuid):
        assert build.redrive_orphaned_builds(mgr, cctxt) == [orphan.uuid]
    (sent,) = mgr.compute_task_api.builds
    assert [i.uuid for i in sent['instances']] == [orphan.uuid]
    assert sent['filter_properties']['retry']['failures'] == [
        [HOST, 'the build on %s stopped without finishing' % HOST]]
    assert hostdoubles.stored(cctxt, running.uuid).host == HOST
    assert hostdoubles.stored(cctxt, active.uuid).vm_state == 'active'


def test_a_failed_build_is_rescheduled_through_a_database_blip(host, monkeypatch):
    mgr, cctxt = host
    instance = _building(mgr, cctxt)
    real_save = instance.save
    failures = [messaging.RemoteError('DBConnectionError', 'Too many connections')]

    def save(**kwargs):
        if failures:
            raise failures.pop(0)
        real_save(**kwargs)
    monkeypatch.setattr(instance, 'save', save)
    req = build.BuildRequestArgs(image=None, request_spec=None, filter_properties={},
                                 admin_password=None, injected_files=[],
                                 requested_networks=[], node=HOST, host_list=[])
    build._reschedule(mgr, cctxt, instance, req, RuntimeError('spawn failed'))
    assert len(mgr.compute_task_api.builds) == 1
    assert hostdoubles.stored(cctxt, instance.uuid).task_state == 'scheduling'


def test_a_build_another_build_took_over_leaves_its_allocation_alone(host):
    """The conductor re-drove a build it thought lost and the other host finished it
    first: this host's claim finds the instance no longer waiting for a host. Its
    cleanup freed the allocation the other build held (an ACTIVE server with none)."""
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, vm_state='building',
                                            task_state='scheduling')
    winner = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    winner.vm_state, winner.task_state, winner.host = 'active', None, 'otherhost'
    winner.save()
    req = build.BuildRequestArgs(image=None, request_spec=None, filter_properties={},
                                 admin_password=None, injected_files=[],
                                 requested_networks=[], node=HOST, host_list=[])
    build.build_and_run_instance(mgr, cctxt, instance, req)
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)
    assert mgr.compute_task_api.builds == []
    kept = hostdoubles.stored(cctxt, instance.uuid)
    assert (kept.vm_state, kept.host) == ('active', 'otherhost')
