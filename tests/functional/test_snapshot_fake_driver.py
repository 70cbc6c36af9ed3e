"""createImage on the fake driver (which uploads an empty disk in its image's format,
here qcow2) through the functional stack and its Glance double."""
from __future__ import annotations

import time

VERSION = '2.45'


def _settled(stack, server_id, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = stack.request('GET', '/servers/%s' % server_id).json()['server']
        if server['OS-EXT-STS:task_state'] is None:
            return server
        time.sleep(0.05)
    raise AssertionError('server %s still has a task' % server_id)


def test_fake_driver_snapshot_uploads_a_payload(stack):
    flavor = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'fake.snap', 'ram': 128, 'vcpus': 1, 'disk': 1}}).json()['flavor']
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': 'fake-snap', 'imageRef': stack.image['id'], 'flavorRef': flavor['id'],
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    stack.wait_for_status(server_id, ('ACTIVE',))
    resp = stack.request('POST', '/servers/%s/action' % server_id, version=VERSION,
                         json={'createImage': {'name': 'fake-image'}})
    assert resp.status_code == 202, resp.text
    image_id = resp.json()['image_id']
    assert _settled(stack, server_id)['status'] == 'ACTIVE'
    image = stack.glance.images[image_id]
    assert image['status'] == 'active'
    assert image['instance_uuid'] == server_id
    assert (image['disk_format'], image['container_format']) == ('qcow2', 'bare')
    assert stack.glance.data[image_id].startswith(b'QFI\xfb')
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
