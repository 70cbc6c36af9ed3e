"""A detach that meets a Cinder outage after the guest let the volume go: the event says
so, and the detach finishes once Cinder answers again, also when the compute service
restarted meanwhile (the Cinder double fails the attachment's delete with 503 for as
long as the test says)."""
from __future__ import annotations

import contextlib

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import manager as compute_manager
from novalite.compute import rpcapi as compute_rpcapi
from novalite.compute import volume_attach
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.service import Service
from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, driver, wait

cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


@pytest.fixture
def quick_retries():
    saved = volume_attach.DETACH_RETRY_INTERVAL
    volume_attach.DETACH_RETRY_INTERVAL = 0.05
    yield
    volume_attach.DETACH_RETRY_INTERVAL = saved


def _events(stack, server_id, action_name):
    actions = stack.request('GET', '/servers/%s/os-instance-actions' % server_id,
                            version='2.51').json()['instanceActions']
    (action,) = [a for a in actions if a['action'] == action_name]
    detail = stack.request('GET', '/servers/%s/os-instance-actions/%s' % (
        server_id, action['request_id']), version='2.51').json()['instanceAction']
    return detail['events']


def _listed(stack, server_id):
    resp = stack.request('GET', '/servers/%s/os-volume_attachments' % server_id,
                         version='2.89')
    assert resp.status_code == 200, resp.text
    return [a['volumeId'] for a in resp.json()['volumeAttachments']]


def _attached(stack, cinder, server):
    volume = cinder.add_volume()
    resp = stack.request('POST', '/servers/%s/os-volume_attachments' % server['id'],
                         json={'volumeAttachment': {'volumeId': volume['id']}})
    assert resp.status_code == 200, resp.text
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'in-use')
    (attachment,) = cinder.attachments_of(server['id'])
    return volume, attachment


def _detach_meets_outage(stack, cinder, server, volume, attachment):
    """Every delete of the attachment answers 503 from now on (the API's part goes
    through); the detach's event says Error once the guest let the volume go."""
    cinder.fail_next(503, 'volume service restarting', count=10 ** 6,
                     path='/attachments/%s' % attachment['id'])
    resp = stack.request('DELETE', '/servers/%s/os-volume_attachments/%s' % (
        server['id'], volume['id']))
    assert resp.status_code == 202, resp.text
    wait(lambda: [e['result'] for e in _events(stack, server['id'],
                                               'detach_volume')] == ['Error'])


def _restart(stack, host):
    """Stop the compute service of ``host`` and start a new one there (a new manager;
    the guests outlive the service, as libvirt's do: the same driver)."""
    old = stack.computes[host]
    old.stop()  # cleanup_host ends the old manager's retry loops
    stack.services.remove(old)
    mgr = compute_manager.ComputeManager(host=host, driver=old.manager.driver)
    new = Service(host, 'novalite-compute', compute_rpcapi.RPC_TOPIC, mgr,
                  indirection_api=conductor_rpcapi.ConductorAPI())
    new.start()
    stack.services.append(new)
    stack.computes[host] = new  # init_host resumed the detaches marked as let go


@contextlib.contextmanager
def _outage(stack, cinder, server, volume, attachment):
    """A detach that met the outage; when the block ends, Cinder is back and the detach
    finishes: the attachment deleted, the mapping gone."""
    try:
        _detach_meets_outage(stack, cinder, server, volume, attachment)
        # The guest has let it go; Cinder still holds the attachment.
        assert driver(stack, server).volumes(server['id']) == {}
        assert cinder.volumes[volume['id']]['status'] == 'detaching'
        assert _listed(stack, server['id']) == [volume['id']]
        yield
        assert cinder.volumes[volume['id']]['status'] == 'detaching'
        assert _listed(stack, server['id']) == [volume['id']]
    finally:
        cinder.faults.clear()
    wait(lambda: cinder.volumes[volume['id']]['status'] == 'available')
    assert cinder.attachments_of(server['id']) == []
    wait(lambda: _listed(stack, server['id']) == [])


def test_a_detach_during_a_cinder_outage_finishes_when_cinder_is_back(
        stack, cinder, flavor, quick_retries):
    server = boot_active(stack, flavor, name='detach-outage')
    volume, attachment = _attached(stack, cinder, server)
    with _outage(stack, cinder, server, volume, attachment):
        assert [e['event'] for e in _events(stack, server['id'], 'detach_volume')] == [
            volume_attach.DETACH_EVENT]
    delete(stack, server['id'])


def test_a_detach_cut_short_by_a_compute_restart_finishes_after_it(stack, cinder, flavor,
                                                                   quick_retries):
    server = boot_active(stack, flavor, name='detach-restart')
    volume, attachment = _attached(stack, cinder, server)
    with _outage(stack, cinder, server, volume, attachment):
        # What outlives the service: the mapping, marked as let go by the guest.
        bdm = objects.BlockDeviceMapping.get_by_volume_and_instance(
            nl_context.get_admin_context(), volume['id'], server['id'])
        assert bdm.connection_info == volume_attach.DETACHED and bdm.attachment_id
        _restart(stack, server['OS-EXT-SRV-ATTR:host'])
    delete(stack, server['id'])
