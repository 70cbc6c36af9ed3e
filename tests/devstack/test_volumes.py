"""Volumes with the real Cinder on Ceph RBD, driven by openstackclient (issue 22).

The stack runs Keystone, Glance, Placement, RabbitMQ, MariaDB, two fake computes and the
real Cinder 29 (api, scheduler, volume with the RBD driver) on a one-node Ceph. What a
user does with openstackclient is checked on Cinder's and Ceph's side: the volume's
status and attachments in Cinder's API, the RBD images in the ``volumes`` pool.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.test_keystone import osc, rest

STACK = harness_cinder.VOLUME_STACK
IMAGE = 'cirros-tiny'
FLAVOR = 'm1.nano'
BIGGER = 'm1.tiny'


@pytest.fixture(scope='module', autouse=True)
def _volumes_possible() -> None:
    harness_cinder.require_volumes()


def _cinder(stack: Stack, method: str, path: str, **kwargs: Any) -> requests.Response:
    assert stack.cinder is not None
    return stack.cinder.api(method, path, **kwargs)


def _volume(stack: Stack, volume_id: str) -> dict[str, Any] | None:
    resp = _cinder(stack, 'GET', '/volumes/%s' % volume_id)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    return resp.json()['volume']


def _attachments(stack: Stack, server_id: str) -> list[dict[str, Any]]:
    resp = _cinder(stack, 'GET', '/attachments?all_tenants=1&instance_id=%s' % server_id)
    resp.raise_for_status()
    return resp.json()['attachments']


def _wait(what: str, check: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.5)


def _wait_status(stack: Stack, volume_id: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        volume = _volume(stack, volume_id)
        assert volume is None or volume['status'] not in ('error', 'error_deleting'), volume
        return volume if volume is not None and volume['status'] == status else None
    return _wait('volume %s %s' % (volume_id, status), reached)


def _rbd_images(stack: Stack) -> list[str]:
    assert stack.cinder is not None
    return stack.cinder.ceph.rbd('ls', 'volumes').split()


def _server(stack: Stack, server_id: str) -> dict[str, Any]:
    resp = rest(stack, 'admin', 'GET', '/servers/%s' % server_id)
    resp.raise_for_status()
    return resp.json()['server']


def _volume_ids(stack: Stack, server_id: str) -> list[str]:
    return [v['id'] for v in _server(stack, server_id)['os-extended-volumes:volumes_attached']]


def _delete_server(stack: Stack, server_id: str) -> None:
    osc(stack, 'alice', 'server', 'delete', '--wait', server_id, fmt_json=False)


@pytest.fixture
def cleanup(volume_stack: Stack) -> Iterator[list[tuple[str, str]]]:
    """(kind, id) pairs deleted after the test whatever its outcome."""
    made: list[tuple[str, str]] = []
    yield made
    for kind, ident in reversed(made):
        try:
            if kind == 'server':
                rest(volume_stack, 'admin', 'DELETE', '/servers/%s' % ident)
                _wait('server %s gone' % ident, lambda i=ident: rest(
                    volume_stack, 'admin', 'GET', '/servers/%s' % i).status_code == 404)
            elif kind == 'volume':
                _cinder(volume_stack, 'DELETE', '/volumes/%s' % ident)
            elif kind == 'image':
                osc(volume_stack, 'admin', 'image', 'delete', ident, fmt_json=False)
        except Exception:  # noqa: BLE001 - best effort; the stack's teardown checks
            pass


def test_add_volume_then_remove_it(volume_stack: Stack, cleanup: list) -> None:
    stack = volume_stack
    volume = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'v1')
    cleanup.append(('volume', volume['id']))
    _wait_status(stack, volume['id'], 'available')
    server = osc(stack, 'alice', 'server', 'create', '--image', IMAGE, '--flavor', FLAVOR,
                 '--nic', 'none', '--wait', 'vol-add')
    cleanup.append(('server', server['id']))

    osc(stack, 'alice', 'server', 'add', 'volume', server['id'], volume['id'])
    attached = _wait_status(stack, volume['id'], 'in-use')
    assert [a['server_id'] for a in attached['attachments']] == [server['id']]
    listed = osc(stack, 'alice', 'server', 'volume', 'list', server['id'])
    assert [v['Volume ID'] for v in listed] == [volume['id']]
    assert listed[0]['Device'] == '/dev/vdb'
    assert _volume_ids(stack, server['id']) == [volume['id']]

    osc(stack, 'alice', 'server', 'remove', 'volume', server['id'], volume['id'],
        fmt_json=False)
    detached = _wait_status(stack, volume['id'], 'available')
    assert detached['attachments'] == []
    assert _attachments(stack, server['id']) == []
    assert osc(stack, 'alice', 'server', 'volume', 'list', server['id']) == []


def test_boot_from_volume_is_an_rbd_image_and_delete_removes_it(volume_stack: Stack,
                                                                cleanup: list) -> None:
    stack = volume_stack
    server = osc(stack, 'alice', 'server', 'create', '--boot-from-volume', '1', '--image',
                 IMAGE, '--flavor', FLAVOR, '--nic', 'none', '--delete-on-termination',
                 '--wait', 'bfv-1')
    cleanup.append(('server', server['id']))
    assert server['status'] == 'ACTIVE'
    (volume_id,) = _volume_ids(stack, server['id'])
    assert 'volume-%s' % volume_id in _rbd_images(stack)
    volume = _volume(stack, volume_id)
    assert volume is not None and volume['status'] == 'in-use'
    assert volume['bootable'] == 'true'
    assert [a['server_id'] for a in volume['attachments']] == [server['id']]
    assert _server(stack, server['id'])['image'] == ''

    _delete_server(stack, server['id'])
    _wait('volume %s deleted' % volume_id, lambda: _volume(stack, volume_id) is None)
    _wait('rbd image gone', lambda: 'volume-%s' % volume_id not in _rbd_images(stack))
    assert _attachments(stack, server['id']) == []


def test_image_of_a_volume_backed_server_boots_a_copy(volume_stack: Stack,
                                                      cleanup: list) -> None:
    stack = volume_stack
    server = osc(stack, 'alice', 'server', 'create', '--boot-from-volume', '1', '--image',
                 IMAGE, '--flavor', FLAVOR, '--nic', 'none', '--delete-on-termination',
                 '--wait', 'bfv-snap-src')
    cleanup.append(('server', server['id']))
    (source_volume,) = _volume_ids(stack, server['id'])
    image = osc(stack, 'alice', 'server', 'image', 'create', '--name', 'bfv-snap', '--wait',
                server['id'])
    cleanup.append(('image', image['id']))
    copy = osc(stack, 'alice', 'server', 'create', '--image', image['id'], '--flavor',
               FLAVOR, '--nic', 'none', '--wait', 'bfv-from-snap')
    cleanup.append(('server', copy['id']))
    assert copy['status'] == 'ACTIVE'
    (copy_volume,) = _volume_ids(stack, copy['id'])
    assert copy_volume != source_volume
    volume = _volume(stack, copy_volume)
    assert volume is not None and volume['status'] == 'in-use' and volume['snapshot_id']
    snapshot = _cinder(stack, 'GET', '/snapshots/%s' % volume['snapshot_id']).json()
    assert snapshot['snapshot']['volume_id'] == source_volume


def test_migrate_and_resize_move_the_attachment(volume_stack: Stack, cleanup: list) -> None:
    stack = volume_stack
    volume = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'v-move')
    cleanup.append(('volume', volume['id']))
    _wait_status(stack, volume['id'], 'available')
    server = osc(stack, 'alice', 'server', 'create', '--image', IMAGE, '--flavor', FLAVOR,
                 '--nic', 'none', '--wait', 'vol-move')
    cleanup.append(('server', server['id']))
    osc(stack, 'alice', 'server', 'add', 'volume', server['id'], volume['id'])
    _wait_status(stack, volume['id'], 'in-use')

    def attached_host() -> str:
        (attachment,) = _wait_status(stack, volume['id'], 'in-use')['attachments']
        return attachment['host_name']

    first = _server(stack, server['id'])['OS-EXT-SRV-ATTR:host']
    assert attached_host() == first
    osc(stack, 'admin', 'server', 'migrate', '--wait', server['id'], fmt_json=False)
    osc(stack, 'admin', 'server', 'resize', 'confirm', server['id'], fmt_json=False)
    second = _server(stack, server['id'])['OS-EXT-SRV-ATTR:host']
    assert second != first
    assert _wait('attachment on %s' % second, lambda: attached_host() == second)

    osc(stack, 'alice', 'server', 'resize', '--flavor', BIGGER, '--wait', server['id'],
        fmt_json=False)
    osc(stack, 'alice', 'server', 'resize', 'confirm', server['id'], fmt_json=False)
    third = _server(stack, server['id'])['OS-EXT-SRV-ATTR:host']
    assert _wait('attachment on %s' % third, lambda: attached_host() == third)
    assert len(_attachments(stack, server['id'])) == 1


def test_cinder_stopped_during_a_boot_from_volume(volume_stack: Stack, cleanup: list) -> None:
    """The server ends in ERROR with a fault naming Cinder; once Cinder is back, nothing
    of it is left there: no volume, no attachment."""
    stack = volume_stack
    assert stack.cinder is not None
    api = stack.cinder.processes['cinder-api']
    before = {v['id'] for v in _cinder(stack, 'GET', '/volumes?all_tenants=1').json()['volumes']}
    api.stop()
    try:
        resp = rest(stack, 'alice', 'POST', '/servers', json={'server': {
            'name': 'bfv-outage', 'flavorRef': _flavor_id(stack, FLAVOR), 'imageRef': '',
            'networks': 'none', 'block_device_mapping_v2': [{
                'uuid': _image_id(stack), 'source_type': 'image',
                'destination_type': 'volume', 'boot_index': 0, 'volume_size': 1,
                'delete_on_termination': True}]}})
        assert resp.status_code == 202, resp.text
        server_id = resp.json()['server']['id']
        cleanup.append(('server', server_id))
        server = _wait('server ERROR', lambda: (lambda s: s if s['status'] in (
            'ERROR', 'ACTIVE') else None)(_server(stack, server_id)), timeout=180)
    finally:
        api.start()
        Stack.wait_for(lambda: _cinder_answers(stack), 120, "Cinder's API back")
    assert server['status'] == 'ERROR', server
    assert 'Cinder' in server['fault']['message'], server['fault']
    assert _attachments(stack, server_id) == []
    after = _cinder(stack, 'GET', '/volumes?all_tenants=1').json()['volumes']
    left = [v for v in after if v['id'] not in before]
    assert left == [], left


def _cinder_answers(stack: Stack) -> bool:
    try:
        return _cinder(stack, 'GET', '/volumes').status_code == 200
    except requests.RequestException:
        return False


def _flavor_id(stack: Stack, name: str) -> str:
    resp = rest(stack, 'admin', 'GET', '/flavors')
    return next(f['id'] for f in resp.json()['flavors'] if f['name'] == name)


def _image_id(stack: Stack) -> str:
    return osc(stack, 'alice', 'image', 'show', IMAGE)['id']
