"""Volumes that follow a server: shelve offload (an image-backed server with a data
volume, a volume-backed one), unshelve onto another host, attach and detach while
shelved offloaded, evacuation from a forced-down host, and Cinder failing in the middle
of an unshelve or an offload. Cinder's side is checked through the double (which keeps
each attachment's connector), the guest's through the fake driver.

As Nova: an offloaded server keeps each volume reserved by an attachment without a
connector (no host); the host it is unshelved or evacuated to gives that attachment its
connector and completes it.
"""
from __future__ import annotations

import socket
import time

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import evacuate as compute_evacuate
from novalite.conf import CONF
from novalite.volume import cinder as volume_cinder
from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, driver, wait

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor

ADMIN = 'admin:admin'


@pytest.fixture
def clean(stack, cinder):
    """After the test: no fault left to inject, no volume half attached, no server."""
    yield
    cinder.faults.clear()
    for server in stack.request('GET', '/servers').json()['servers']:
        delete(stack, server['id'])
    assert not [v for v in cinder.volumes.values()
                if v['status'] in ('reserved', 'attaching', 'detaching', 'in-use')], \
        cinder.volumes
    assert cinder.attachments == {}


def _data_volume(volume_id, **extra):
    return dict({'source_type': 'volume', 'destination_type': 'volume',
                 'uuid': volume_id}, **extra)


def _action(stack, server_id, body, version='2.91', token=ADMIN):
    return stack.request('POST', '/servers/%s/action' % server_id, json=body,
                         version=version, token=token)


def _get(stack, server_id):
    resp = stack.request('GET', '/servers/%s' % server_id, version='2.91')
    assert resp.status_code == 200, resp.text
    return resp.json()['server']


def _settled(stack, server_id, status, timeout=20.0):
    """The server in ``status`` with no task (an unshelve that failed shows
    SHELVED_OFFLOADED all along: its task says when it is over)."""
    deadline = time.monotonic() + timeout
    while True:
        server = _get(stack, server_id)
        if server['status'] == status and server['OS-EXT-STS:task_state'] is None:
            return server
        assert server['status'] != 'ERROR' or status == 'ERROR', server.get('fault')
        assert time.monotonic() < deadline, (server['status'],
                                             server['OS-EXT-STS:task_state'])
        time.sleep(0.05)


def _events(stack, server_id, action, wanted):
    """The events of the server's last ``action`` once ``wanted`` is among them and
    they are all finished."""
    def finished():
        actions = stack.request('GET', '/servers/%s/os-instance-actions' % server_id,
                                version='2.51').json()['instanceActions']
        mine = [a for a in actions if a['action'] == action]
        if not mine:
            return None
        detail = stack.request('GET', '/servers/%s/os-instance-actions/%s' % (
            server_id, mine[0]['request_id']), version='2.51').json()['instanceAction']
        events = {e['event']: e['result'] for e in detail['events']}
        return events if wanted in events and None not in events.values() else None
    wait(finished)
    return finished()


def _allocations(stack, server_id):
    return stack.placement_get('/allocations/%s' % server_id)['allocations']


def _host_of(attachment):
    """The host Cinder exported the volume to (None: only reserved)."""
    return (attachment.get('connector') or {}).get('host')


def _only_attachment(cinder, server_id, volume_id):
    (attachment,) = [a for a in cinder.attachments_of(server_id)
                     if a['volume_id'] == volume_id]
    return attachment


def _assert_reserved(cinder, server_id, volume_ids, exact=True):
    """Offloaded: each volume reserved for the server by one attachment with no host
    (``exact``: and the server has no other attachment)."""
    for volume_id in volume_ids:
        attachment = _only_attachment(cinder, server_id, volume_id)
        assert attachment['status'] == 'reserved', attachment
        assert _host_of(attachment) is None and not attachment['connection_info']
        assert cinder.volumes[volume_id]['status'] == 'reserved'
    assert not exact or sorted(a['volume_id'] for a in cinder.attachments_of(server_id)) == \
        sorted(volume_ids)


def _assert_held_without_host(cinder, server_id, volume_id):
    attachment = _only_attachment(cinder, server_id, volume_id)
    assert _host_of(attachment) is None and not attachment['connection_info']
    assert cinder.volumes[volume_id]['status'] in ('reserved', 'in-use')


def _assert_attached_on(stack, cinder, server, volume_ids):
    """Each volume in use through one completed attachment exported to the server's
    host, and in its guest."""
    host = server['OS-EXT-SRV-ATTR:host']
    guest = driver(stack, server).volumes(server['id'])
    assert sorted(info['serial'] for info in guest.values()) == sorted(volume_ids)
    for volume_id in volume_ids:
        attachment = _only_attachment(cinder, server['id'], volume_id)
        assert attachment['status'] == 'attached', attachment
        assert _host_of(attachment) == host
        assert cinder.volumes[volume_id]['status'] == 'in-use'
        (device,) = [d for d, info in guest.items() if info['serial'] == volume_id]
        assert guest[device]['attachment_id'] == attachment['id']
    assert len(cinder.attachments_of(server['id'])) == len(volume_ids)


def _mappings(server_id):
    ctxt = nl_context.get_admin_context()
    return {bdm.volume_id: bdm for bdm in
            objects.BlockDeviceMappingList.get_by_instance_uuid(ctxt, server_id)
            if bdm.is_volume}


def _shelved(stack, server_id):
    resp = _action(stack, server_id, {'shelve': None})
    assert resp.status_code == 202, resp.text
    shelved = _settled(stack, server_id, 'SHELVED_OFFLOADED')
    assert shelved['OS-EXT-SRV-ATTR:host'] is None
    assert _allocations(stack, server_id) == {}
    return shelved


def _unshelved(stack, server_id, host=None):
    resp = _action(stack, server_id, {'unshelve': {'host': host} if host else None})
    assert resp.status_code == 202, resp.text
    back = _settled(stack, server_id, 'ACTIVE')
    if host:
        assert back['OS-EXT-SRV-ATTR:host'] == host
    return back


def _other_host(stack, host):
    return next(h for h in stack.computes if h != host)


def test_shelve_offload_then_unshelve_on_another_host_moves_the_data_volume(
        stack, cinder, flavor, clean):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_data_volume(volume['id'])], name='shelve-vm')
    server_id, source = server['id'], server['OS-EXT-SRV-ATTR:host']
    _assert_attached_on(stack, cinder, server, [volume['id']])
    first = _only_attachment(cinder, server_id, volume['id'])['id']

    _shelved(stack, server_id)
    _assert_reserved(cinder, server_id, [volume['id']])
    assert first not in cinder.attachments
    assert driver(stack, server).volumes(server_id) == {}
    assert _mappings(server_id)[volume['id']].connection_info is None
    assert _events(stack, server_id, 'shelve', 'compute_shelve_instance') == {
        'compute_shelve_instance': 'Success'}

    dest = _other_host(stack, source)
    back = _unshelved(stack, server_id, host=dest)
    _assert_attached_on(stack, cinder, back, [volume['id']])
    assert _mappings(server_id)[volume['id']].connection_info is not None
    assert driver(stack, back).volumes(server_id)['/dev/vdb']['serial'] == volume['id']

    delete(stack, server_id)
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server_id) == []


def test_a_volume_backed_server_is_offloaded_at_once_and_comes_back(
        stack, cinder, flavor, clean):
    images = set(stack.glance.images)
    server = boot_active(stack, flavor, [{
        'source_type': 'image', 'destination_type': 'volume', 'uuid': stack.image['id'],
        'boot_index': 0, 'volume_size': 1, 'delete_on_termination': True}],
        image=False, name='backed-vm')
    server_id = server['id']
    (root,) = [a['volume_id'] for a in cinder.attachments_of(server_id)]

    _shelved(stack, server_id)
    # No image: the volume keeps the disk.
    assert set(stack.glance.images) == images
    _assert_reserved(cinder, server_id, [root])
    assert _events(stack, server_id, 'shelve', 'compute_shelve_offload_instance') == {
        'compute_shelve_offload_instance': 'Success'}

    back = _unshelved(stack, server_id)
    _assert_attached_on(stack, cinder, back, [root])
    assert driver(stack, back).volumes(server_id)['/dev/vda']['serial'] == root

    # Shelved again, then deleted while offloaded: delete_on_termination still holds.
    _shelved(stack, server_id)
    delete(stack, server_id)
    assert root not in cinder.volumes


def test_attach_and_detach_while_shelved_offloaded(stack, cinder, flavor, clean):
    kept, added = cinder.add_volume(), cinder.add_volume()
    server = boot_active(stack, flavor, [_data_volume(kept['id'])], name='offload-vm')
    server_id = server['id']
    _shelved(stack, server_id)
    path = '/servers/%s/os-volume_attachments' % server_id

    resp = stack.request('POST', path, version='2.79', json={
        'volumeAttachment': {'volumeId': added['id']}})
    assert resp.status_code == 200, resp.text
    # Held for the server, with no host until it is unshelved (Nova also completes
    # this attachment, so Cinder may show the volume in-use).
    _assert_reserved(cinder, server_id, [kept['id']], exact=False)
    _assert_held_without_host(cinder, server_id, added['id'])
    # Completed without a connector, as Nova: Cinder shows it in use by the server.
    assert cinder.volumes[added['id']]['status'] == 'in-use'

    # One attached and detached while offloaded, to be deleted with its mapping.
    doomed = cinder.add_volume()
    resp = stack.request('POST', path, version='2.79', json={
        'volumeAttachment': {'volumeId': doomed['id'], 'delete_on_termination': True}})
    assert resp.status_code == 200, resp.text
    resp = stack.request('DELETE', '%s/%s' % (path, doomed['id']), version='2.79')
    assert resp.status_code == 202, resp.text
    assert doomed['id'] not in cinder.volumes

    resp = stack.request('DELETE', '%s/%s' % (path, kept['id']), version='2.79')
    assert resp.status_code == 202, resp.text
    assert cinder.volumes[kept['id']]['status'] == 'available'
    assert [a['volume_id'] for a in cinder.attachments_of(server_id)] == [added['id']]
    listed = stack.request('GET', path, version='2.79').json()['volumeAttachments']
    assert [a['volumeId'] for a in listed] == [added['id']]

    back = _unshelved(stack, server_id)
    _assert_attached_on(stack, cinder, back, [added['id']])
    assert driver(stack, back).volumes(server_id)['/dev/vdb']['serial'] == added['id']
    listed = stack.request('GET', path, version='2.79').json()['volumeAttachments']
    assert [(a['volumeId'], a['device']) for a in listed] == [(added['id'], '/dev/vdb')]


@pytest.mark.parametrize('backed', [False, True], ids=['image-backed', 'volume-backed'])
def test_evacuate_moves_the_attachments_and_delete_on_termination_holds(
        stack, cinder, flavor, clean, backed):
    data = cinder.add_volume()
    made = {'destination_type': 'volume', 'volume_size': 1, 'delete_on_termination': True}
    made.update({'source_type': 'image', 'uuid': stack.image['id'], 'boot_index': 0}
                if backed else {'source_type': 'blank'})
    server = boot_active(stack, flavor, [_data_volume(data['id']), made],
                         image=not backed, name='evacuee')
    server_id, source = server['id'], server['OS-EXT-SRV-ATTR:host']
    volumes = sorted(a['volume_id'] for a in cinder.attachments_of(server_id))
    (blank,) = [v for v in volumes if v != data['id']]
    before = {a['id'] for a in cinder.attachments_of(server_id)}

    stack.force_down(source, True)
    try:
        resp = _action(stack, server_id, {'evacuate': {}}, version='2.29')
        assert resp.status_code == 200, resp.text
        evacuated = _settled(stack, server_id, 'ACTIVE')
        dest = evacuated['OS-EXT-SRV-ATTR:host']
        assert dest != source
        _assert_attached_on(stack, cinder, evacuated, volumes)
        assert not before & set(cinder.attachments), 'the dead host keeps attachments'
        assert _events(stack, server_id, 'evacuate', 'compute_rebuild_instance')[
            'compute_rebuild_instance'] == 'Success'
        # The dead host comes back: it removes its guest, asking Cinder nothing more.
        requests = len(cinder.requests())
        cleaned = compute_evacuate.destroy_evacuated_instances(
            stack.computes[source].manager, nl_context.get_admin_context())
        assert cleaned == [server_id]
        assert len(cinder.requests()) == requests
    finally:
        stack.force_down(source, False)
    _assert_attached_on(stack, cinder, evacuated, volumes)

    delete(stack, server_id)
    assert blank not in cinder.volumes
    assert cinder.volumes[data['id']]['status'] == 'available'
    assert cinder.attachments_of(server_id) == []


@pytest.mark.parametrize('step', ['update', 'complete', 'unreachable'])
def test_cinder_failing_the_unshelve_connect_keeps_the_volume_reserved(
        stack, cinder, flavor, clean, step):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_data_volume(volume['id'])], name='unshelve-vm')
    server_id = server['id']
    _shelved(stack, server_id)
    reserved = _only_attachment(cinder, server_id, volume['id'])['id']
    if step == 'update':
        # Every try of the update (it is tried again on a 500).
        cinder.fail_next(500, 'update refused', count=volume_cinder.ATTACHMENT_TRIES,
                         path='/attachments/%s' % reserved)
    elif step == 'complete':
        cinder.fail_next(500, 'complete refused', path='/attachments/%s/action' % reserved)
    else:
        # Nothing answers: not even the host's release after the failure gets through.
        CONF.set_override('endpoint_template', _dead_endpoint(), group='cinder')

    try:
        resp = _action(stack, server_id, {'unshelve': None})
        assert resp.status_code == 202, resp.text
        assert _events(stack, server_id, 'unshelve', 'compute_unshelve_instance')[
            'compute_unshelve_instance'] == 'Error'
    finally:
        CONF.set_override('endpoint_template', cinder.url + '/v3', group='cinder')
    failed = _settled(stack, server_id, 'SHELVED_OFFLOADED')
    assert failed['OS-EXT-SRV-ATTR:host'] is None
    assert _allocations(stack, server_id) == {}
    # Still the server's, with no host: no attachment left exported anywhere.
    _assert_reserved(cinder, server_id, [volume['id']])
    assert _mappings(server_id)[volume['id']].connection_info is None
    for host in stack.computes:
        assert server_id not in stack.computes[host].manager.driver.list_instance_uuids()

    back = _unshelved(stack, server_id)
    _assert_attached_on(stack, cinder, back, [volume['id']])


def _dead_endpoint():
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    return 'http://127.0.0.1:%d/v3' % port


def test_cinder_failing_the_offload_leaves_the_server_shelved_on_its_host(
        stack, cinder, flavor, clean):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_data_volume(volume['id'])], name='offload-fail')
    server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
    attached = _only_attachment(cinder, server_id, volume['id'])['id']
    allocations = _allocations(stack, server_id)
    # The offload's first Cinder request: the new reservation.
    cinder.fail_next(500, 'reserve refused', path='/attachments')

    resp = _action(stack, server_id, {'shelve': None})
    assert resp.status_code == 202, resp.text
    shelved = _settled(stack, server_id, 'SHELVED')
    # As Nova: the offload failed after the shelve, the server keeps its host and
    # resources; the volume is untouched in Cinder.
    assert shelved['OS-EXT-SRV-ATTR:host'] == host
    assert _allocations(stack, server_id) == allocations
    assert set(cinder.attachments) >= {attached}
    assert _only_attachment(cinder, server_id, volume['id'])['id'] == attached
    assert cinder.volumes[volume['id']]['status'] == 'in-use'
    latest = objects.InstanceFault.get_latest_for_instance(nl_context.get_admin_context(),
                                                           server_id)
    assert latest is not None and 'reserve refused' in latest.message, latest

    # An admin's shelveOffload finishes the job.
    resp = _action(stack, server_id, {'shelveOffload': None})
    assert resp.status_code == 202, resp.text
    _settled(stack, server_id, 'SHELVED_OFFLOADED')
    _assert_reserved(cinder, server_id, [volume['id']])
    assert _allocations(stack, server_id) == {}
    back = _unshelved(stack, server_id)
    _assert_attached_on(stack, cinder, back, [volume['id']])


def test_cinder_failing_the_evacuate_connect_leaves_error_and_delete_cleans_up(
        stack, cinder, flavor, clean):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_data_volume(volume['id'])], name='evac-fail')
    server_id, source = server['id'], server['OS-EXT-SRV-ATTR:host']
    # The destination's complete of the new attachment (the only action request).
    cinder.fail_next(500, 'complete refused', path='/action')
    stack.force_down(source, True)
    try:
        resp = _action(stack, server_id, {'evacuate': {}}, version='2.29')
        assert resp.status_code == 200, resp.text
        failed = _settled(stack, server_id, 'ERROR')
    finally:
        stack.force_down(source, False)
    # As Nova: ERROR on the destination, with the fault.
    assert failed['OS-EXT-SRV-ATTR:host'] == _other_host(stack, source)
    assert 'complete refused' in failed['fault']['message']
    assert _events(stack, server_id, 'evacuate', 'compute_rebuild_instance')[
        'compute_rebuild_instance'] == 'Error'
    # The dead host's attachment is gone; the one the mapping holds is the only one.
    (attachment,) = cinder.attachments_of(server_id)
    assert _mappings(server_id)[volume['id']].attachment_id == attachment['id']

    delete(stack, server_id)
    assert cinder.volumes[volume['id']]['status'] == 'available'
    assert cinder.attachments_of(server_id) == []
