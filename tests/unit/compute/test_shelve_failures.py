"""Each way shelving fails (``compute/shelve.py``) leaves the promised state: a shelve
whose power-off or snapshot fails deletes the image and leaves the server as it was,
with a fault; an offload that fails leaves it SHELVED on its host, still allocated; an
unshelve whose claim or spawn fails leaves nothing here (no guest, claim, allocation or
host) and the server SHELVED_OFFLOADED with its shelved image."""
from __future__ import annotations

import uuid

import oslo_messaging as messaging
import pytest
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import shelve
from novalite.conf import CONF
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import (
    HOST,
    Manager,
    RecordingImageAPI,
    RecordingNetworkAPI,
    ScriptedReportClient,
)

pytestmark = pytest.mark.usefixtures('no_pause')

IMAGE = '5f3c2e1a-5e1f-4d0a-8c3b-0d15ea5e0001'
VIF = {'id': 'port-server', 'active': True, 'preserve_on_delete': False}


@pytest.fixture
def host(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        mgr = Manager(ScriptedReportClient(cloud.reportclient), cctxt,
                      net_api=RecordingNetworkAPI())
        mgr.image_api = RecordingImageAPI()
        yield mgr, cctxt


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def _snapshot_ok(context, instance, image_id, update_task_state):
    """The driver's snapshot without Glance: its task states only."""
    update_task_state(task_state='image_pending_upload')
    update_task_state(task_state='image_uploading', expected_state='image_pending_upload')


def _shelving(mgr, cctxt):
    instance = hostdoubles.instance_on_host(mgr, cctxt, task_state='shelving')
    mgr.driver.spawn(cctxt, instance, None, [], None, {})
    hostdoubles.start_action(cctxt, instance.uuid, 'shelve')
    return instance


def _assert_as_before_the_shelve(mgr, cctxt, instance, fault):
    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['system_metadata'])
    assert (saved.vm_state, saved.task_state, saved.host) == ('active', None, HOST)
    assert 'shelved_image_id' not in saved.system_metadata
    assert hostdoubles.fault(cctxt, instance.uuid) == fault
    assert mgr.image_api.deleted == [IMAGE]
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)
    assert instance.uuid in mgr.rt.tracked


# -- shelve --------------------------------------------------------------------------------

def test_a_guest_that_will_not_power_off_is_not_shelved_and_its_image_goes(host):
    mgr, cctxt = host
    instance = _shelving(mgr, cctxt)
    mgr.driver.power_off = _raise(RuntimeError('stuck'))

    shelve.shelve_instance(mgr, cctxt, instance, IMAGE)

    _assert_as_before_the_shelve(mgr, cctxt, instance, 'RuntimeError')


def test_a_failed_snapshot_is_not_shelved_and_its_image_goes(host):
    mgr, cctxt = host
    instance = _shelving(mgr, cctxt)
    mgr.driver.snapshot = _raise(exception.GlanceConnectionFailed(server='glance',
                                                                  reason='refused'))

    shelve.shelve_instance(mgr, cctxt, instance, IMAGE)

    _assert_as_before_the_shelve(mgr, cctxt, instance, exception.GlanceConnectionFailed(
        server='glance', reason='refused').format_message())


def test_a_failed_offload_right_after_the_shelve_leaves_it_shelved_and_allocated(host):
    mgr, cctxt = host
    assert CONF.shelved_offload_time == 0  # offload at once
    instance = _shelving(mgr, cctxt)
    mgr.driver.snapshot = _snapshot_ok
    mgr.network_api.unbind_error = exception.NeutronConnectionFailed(server='neutron',
                                                                     reason='refused')

    shelve.shelve_instance(mgr, cctxt, instance, IMAGE)

    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['system_metadata'])
    assert (saved.vm_state, saved.task_state, saved.host) == ('shelved', None, HOST)
    assert saved.system_metadata['shelved_image_id'] == IMAGE
    assert 'Could not reach the network service' in hostdoubles.fault(cctxt, instance.uuid)
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)
    assert mgr.reportclient.called('delete_allocation_for_instance') == []
    assert mgr.image_api.deleted == []


def test_powering_off_a_guest_that_is_gone_is_nothing_to_do(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt)
    mgr.driver.power_off = _raise(AssertionError('no guest to power off'))

    shelve._power_off(mgr, instance, clean_shutdown=True)


def test_an_expired_shelve_that_another_action_took_meanwhile_is_not_offloaded(host):
    mgr, cctxt = host
    instance = hostdoubles.instance_on_host(mgr, cctxt, vm_state='shelved')
    mgr.driver.spawn(cctxt, instance, None, [], None, {})
    instance.system_metadata = {'shelved_at': '2000-01-01T00:00:00+00:00',
                                'shelved_image_id': IMAGE, 'shelved_host': HOST}
    instance.save()
    real_lock = mgr.instance_lock(instance.uuid)

    class UnshelveFirstLock:
        """The instance lock, taken just after an unshelve was accepted (a double)."""

        def acquire(self, blocking=True):
            stored = objects.Instance.get_by_uuid(cctxt, instance.uuid)
            stored.task_state = 'unshelving'
            stored.save()
            return real_lock.acquire(blocking)

        def release(self):
            real_lock.release()
    mgr.instance_lock = lambda instance_uuid: UnshelveFirstLock()
    CONF.set_override('shelved_offload_time', 1)
    try:
        shelve.offload_expired(mgr, cctxt)
    finally:
        CONF.clear_override('shelved_offload_time')

    saved = hostdoubles.stored(cctxt, instance.uuid)
    assert (saved.vm_state, saved.task_state, saved.host) == ('shelved', 'unshelving', HOST)
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid)
    assert real_lock.acquire(blocking=False)


# -- unshelve ------------------------------------------------------------------------------

def _offloaded(mgr, cctxt, memory_mb=512):
    """A SHELVED_OFFLOADED server the conductor has just scheduled here: this host
    claimed in Placement, the task unshelving."""
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=memory_mb, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    instance = objects.Instance(
        cctxt, uuid=str(uuid.uuid4()), host=None, node=None, project_id='p1',
        user_id='u1', vm_state='shelved_offloaded', task_state='unshelving',
        flavor=flavor, image_ref='img-1',
        system_metadata={'shelved_image_id': IMAGE, 'shelved_host': HOST,
                         'shelved_at': timeutils.utcnow(with_timezone=True).isoformat()})
    instance.create()
    instance.info_cache = objects.InstanceInfoCache(instance_uuid=instance.uuid,
                                                    network_info=[VIF])
    instance.save()
    assert mgr.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        mgr.rt.compute_nodes[HOST].uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 512,
                                                       'DISK_GB': 1}}}}, 'p1', 'u1')
    hostdoubles.start_action(cctxt, instance.uuid, 'unshelve')
    return objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                        expected_attrs=['system_metadata', 'flavor',
                                                        'info_cache'])


def _assert_back_offloaded(mgr, cctxt, instance, fault):
    saved = objects.Instance.get_by_uuid(cctxt, instance.uuid,
                                         expected_attrs=['system_metadata'])
    assert (saved.vm_state, saved.task_state, saved.host, saved.node, saved.compute_id) == (
        'shelved_offloaded', None, None, None, None)
    assert saved.system_metadata['shelved_image_id'] == IMAGE
    assert fault in hostdoubles.fault(cctxt, instance.uuid)
    assert mgr.image_api.deleted == []
    assert instance.uuid not in mgr.driver.list_instance_uuids()
    assert instance.uuid not in mgr.rt.tracked
    assert hostdoubles.allocations(mgr, cctxt, instance.uuid) == {}


def test_a_failed_unshelve_spawn_leaves_nothing_here(host):
    mgr, cctxt = host
    instance = _offloaded(mgr, cctxt)
    mgr.driver.spawn = _raise(exception.ImageNotFound(image_id=IMAGE))

    shelve.unshelve_instance(mgr, cctxt, instance, {'id': IMAGE}, HOST)

    _assert_back_offloaded(mgr, cctxt, instance, 'Image %s could not be found.' % IMAGE)
    assert mgr.network_api.bound == [HOST]


def test_an_unshelve_the_host_cannot_claim_leaves_nothing_here(host):
    mgr, cctxt = host
    instance = _offloaded(mgr, cctxt, memory_mb=10 ** 7)

    shelve.unshelve_instance(mgr, cctxt, instance, {'id': IMAGE}, HOST)

    _assert_back_offloaded(mgr, cctxt, instance, 'Insufficient compute resources')
    assert mgr.network_api.bound == []


def test_an_unshelve_whose_ports_cannot_be_bound_leaves_nothing_here(host):
    mgr, cctxt = host
    instance = _offloaded(mgr, cctxt)
    mgr.network_api.bind_ports_to_host = _raise(messaging.MessagingTimeout('neutron?'))

    shelve.unshelve_instance(mgr, cctxt, instance, {'id': IMAGE}, HOST)

    _assert_back_offloaded(mgr, cctxt, instance, 'MessagingTimeout')


def test_a_failed_unshelve_keeps_the_servers_ports(host):
    mgr, cctxt = host
    instance = _offloaded(mgr, cctxt)
    mgr.driver.spawn = _raise(RuntimeError('guest will not start'))

    shelve.unshelve_instance(mgr, cctxt, instance, {'id': IMAGE}, HOST)

    assert hostdoubles.stored(cctxt, instance.uuid).vm_state == 'shelved_offloaded'
    assert mgr.network_api.released == []
    assert mgr.network_api.unbound == [instance.uuid]
