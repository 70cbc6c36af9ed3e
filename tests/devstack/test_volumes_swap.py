"""Swapping a server's volume with the real Cinder on Ceph RBD (issue 22).

In the shared volume stack (``VOLUME_STACK``: Keystone, two fake computes, Cinder 29 on
a one-node Ceph): alice's server has her volume v1; the cloud's admin swaps it for v2
with openstacksdk (``PUT /servers/{id}/os-volume_attachments/{v1}`` at 2.85: no client
command does it). Cinder then shows v2 ``in-use`` attached to the server at v1's device
and v1 ``available`` with no attachment; the server lists v2 only, and alice (not an
administrator) is refused the same swap (403).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.devstack import clients
from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.test_keystone import rest
from tests.devstack.test_volumes import (
    FLAVOR,
    IMAGE,
    _attachments,
    _cinder,
    _volume,
    _wait,
    _wait_status,
    osc,
)

STACK = harness_cinder.VOLUME_STACK


@pytest.fixture(scope='module', autouse=True)
def _volumes_possible() -> None:
    harness_cinder.require_volumes()


@pytest.fixture
def made(volume_stack: Stack) -> Iterator[list[tuple[str, str]]]:
    """(kind, id) pairs deleted after the test whatever its outcome."""
    found: list[tuple[str, str]] = []
    yield found
    for kind, ident in reversed(found):
        try:
            if kind == 'server':
                rest(volume_stack, 'admin', 'DELETE', '/servers/%s' % ident)
                _wait('server %s gone' % ident, lambda i=ident: rest(
                    volume_stack, 'admin', 'GET', '/servers/%s' % i).status_code == 404)
            else:
                _cinder(volume_stack, 'DELETE', '/volumes/%s' % ident)
        except Exception:  # noqa: BLE001 - best effort; the stack's teardown checks
            pass


def _swap(stack: Stack, server_id: str, old_id: str, new_id: str) -> Any:
    """The admin's swap through openstacksdk's compute proxy (keystoneauth)."""
    conn = clients.sdk(stack)
    try:
        return conn.compute.put(
            '/servers/%s/os-volume_attachments/%s' % (server_id, old_id),
            json={'volumeAttachment': {'volumeId': new_id}}, microversion='2.85',
            raise_exc=False)
    finally:
        conn.close()


def _instance_action_events(stack: Stack, server_id: str) -> list[tuple[str, str]]:
    actions = rest(stack, 'admin', 'GET', '/servers/%s/os-instance-actions' % server_id
                   ).json()['instanceActions']
    events: list[tuple[str, str]] = []
    for action in actions:
        if action['action'] == 'swap_volume':
            detail = rest(stack, 'admin', 'GET', '/servers/%s/os-instance-actions/%s' % (
                server_id, action['request_id'])).json()['instanceAction']
            events += [(e['event'], e['result']) for e in detail['events']]
    return events


def test_admin_swaps_a_volume_of_alices_server(volume_stack: Stack, made: list) -> None:
    stack = volume_stack
    v1 = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'swap-v1')
    made.append(('volume', v1['id']))
    v2 = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'swap-v2')
    made.append(('volume', v2['id']))
    server = osc(stack, 'alice', 'server', 'create', '--image', IMAGE, '--flavor', FLAVOR,
                 '--nic', 'none', '--wait', 'swap-vm')
    made.insert(0, ('server', server['id']))
    assert server['status'] == 'ACTIVE', server
    _wait_status(stack, v1['id'], 'available')
    _wait_status(stack, v2['id'], 'available')
    osc(stack, 'alice', 'server', 'add', 'volume', server['id'], v1['id'])
    before = _wait_status(stack, v1['id'], 'in-use')
    ((server_id, device),) = [(a['server_id'], a['device']) for a in before['attachments']]
    assert server_id == server['id']

    # alice may not swap (only administrators and services).
    refused = rest(stack, 'alice', 'PUT', '/servers/%s/os-volume_attachments/%s' % (
        server['id'], v1['id']), json={'volumeAttachment': {'volumeId': v2['id']}})
    assert refused.status_code == 403, refused.text

    resp = _swap(stack, server['id'], v1['id'], v2['id'])
    assert resp.status_code == 202, resp.text
    _wait('the swap finished', lambda: [
        result for _event, result in _instance_action_events(stack, server['id'])
        if result is not None])
    assert _instance_action_events(stack, server['id']) == [
        ('compute_swap_volume', 'Success')]

    after = _wait_status(stack, v2['id'], 'in-use')
    assert [(a['server_id'], a['device']) for a in after['attachments']] == [
        (server['id'], device)]
    old = _wait_status(stack, v1['id'], 'available')
    assert old['attachments'] == []
    (held,) = _attachments(stack, server['id'])
    assert held['volume_id'] == v2['id'] and held['status'] == 'attached'
    listed = osc(stack, 'alice', 'server', 'volume', 'list', server['id'])
    assert [(v['Volume ID'], v['Device']) for v in listed] == [(v2['id'], device)]

    # The server's delete lets v2 go; both volumes are then deleted by the fixture.
    osc(stack, 'alice', 'server', 'delete', '--wait', server['id'], fmt_json=False)
    assert _wait_status(stack, v2['id'], 'available')['attachments'] == []
    assert _volume(stack, v1['id']) is not None
