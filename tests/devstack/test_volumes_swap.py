"""Swapping a server's volume with the real Cinder on Ceph RBD: Cinder's retype with
migration (Nova 34 swaps only for Cinder).

In the shared volume stack (``VOLUME_STACK``: Keystone, two fake computes, Cinder 29 on
a one-node Ceph with two RBD backends, ``ceph`` on pool ``volumes`` and ``ceph2`` on
``volumes2``, and a volume type bound to each): alice's server has her volume v1 of
type ``ceph``. The admin's own swap of it (``PUT /servers/{id}/os-volume_attachments/
{v1}``) is refused with 409: v1 is not migrating. The admin then retypes v1 to ``ceph2``
with migration on demand (``openstack volume set --type ceph2 --migration-policy
on-demand``): Cinder makes a volume on ``ceph2``, calls novalite's swap as its ``[nova]``
user, novalite moves the server to it and tells Cinder the migration is over. v1 (same
id) ends ``in-use`` on ``ceph2`` with one attachment, to the server at the same device;
the server still lists v1; the temporary volume and the old RBD image are gone.
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
# The volume types the stack's Cinder has (``novalite.allinone.cinder.VOLUME_TYPES``).
TYPE_A, TYPE_B = 'ceph', 'ceph2'


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


def swap_by_admin(stack: Stack, server_id: str, old_id: str, new_id: str) -> Any:
    """The admin's own swap through openstacksdk's compute proxy (keystoneauth)."""
    conn = clients.sdk(stack)
    try:
        return conn.compute.put(
            '/servers/%s/os-volume_attachments/%s' % (server_id, old_id),
            json={'volumeAttachment': {'volumeId': new_id}}, microversion='2.85',
            raise_exc=False)
    finally:
        conn.close()


def swap_events(stack: Stack, server_id: str) -> list[tuple[str, str]]:
    actions = rest(stack, 'admin', 'GET', '/servers/%s/os-instance-actions' % server_id
                   ).json()['instanceActions']
    events: list[tuple[str, str]] = []
    for action in actions:
        if action['action'] == 'swap_volume':
            detail = rest(stack, 'admin', 'GET', '/servers/%s/os-instance-actions/%s' % (
                server_id, action['request_id'])).json()['instanceAction']
            events += [(e['event'], e['result']) for e in detail['events']]
    return events


def retype_with_migration(stack: Stack, volume_id: str, volume_type: str
                          ) -> dict[str, Any]:
    """The admin retypes the volume with migration on demand; its view once Cinder's
    migration ended (``migration_status`` ``success``; an error fails the test)."""
    osc(stack, 'admin', 'volume', 'set', '--type', volume_type, '--migration-policy',
        'on-demand', volume_id, fmt_json=False)

    def migrated() -> dict[str, Any] | None:
        volume = _volume(stack, volume_id)
        assert volume is not None
        assert volume.get('migration_status') not in ('error',), volume
        done = volume.get('migration_status') == 'success' and volume['status'] == 'in-use'
        return volume if done else None
    return _wait('volume %s migrated to %s' % (volume_id, volume_type), migrated, 180)


def backend_of(volume: dict[str, Any]) -> str:
    """The backend of ``host@backend#pool``."""
    return volume['os-vol-host-attr:host'].split('@', 1)[1].split('#', 1)[0]


def test_a_retype_of_an_attached_volume_swaps_it(volume_stack: Stack, made: list) -> None:
    stack = volume_stack
    assert stack.cinder is not None
    v1 = osc(stack, 'alice', 'volume', 'create', '--size', '1', '--type', TYPE_A,
             'retype-v1')
    made.append(('volume', v1['id']))
    v2 = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'retype-v2')
    made.append(('volume', v2['id']))
    server = osc(stack, 'alice', 'server', 'create', '--image', IMAGE, '--flavor', FLAVOR,
                 '--nic', 'none', '--wait', 'retype-vm')
    made.insert(0, ('server', server['id']))
    assert server['status'] == 'ACTIVE', server
    assert backend_of(_wait_status(stack, v1['id'], 'available')) == 'ceph'
    _wait_status(stack, v2['id'], 'available')
    osc(stack, 'alice', 'server', 'add', 'volume', server['id'], v1['id'])
    before = _wait_status(stack, v1['id'], 'in-use')
    ((server_id, device),) = [(a['server_id'], a['device']) for a in before['attachments']]
    assert server_id == server['id']
    assert before['migration_status'] is None
    assert 'volume-%s' % v1['id'] in stack.cinder.ceph.rbd('ls', 'volumes').split()

    # v1 is not migrating: not even the admin may swap it (Nova 34), nor may alice.
    refused = swap_by_admin(stack, server['id'], v1['id'], v2['id'])
    assert refused.status_code == 409, refused.text
    assert 'this API should only be called by Cinder' in refused.text
    forbidden = rest(stack, 'alice', 'PUT', '/servers/%s/os-volume_attachments/%s' % (
        server['id'], v1['id']), json={'volumeAttachment': {'volumeId': v2['id']}})
    assert forbidden.status_code == 403, forbidden.text
    assert _wait_status(stack, v2['id'], 'available')['attachments'] == []
    assert swap_events(stack, server['id']) == []

    # The retype: Cinder migrates v1 to ceph2 through novalite's swap.
    after = retype_with_migration(stack, v1['id'], TYPE_B)
    assert backend_of(after) == 'ceph2' and after['volume_type'] == TYPE_B
    assert swap_events(stack, server['id']) == [('compute_swap_volume', 'Success')]
    assert [(a['server_id'], a['device']) for a in after['attachments']] == [
        (server['id'], device)]
    (held,) = _attachments(stack, server['id'])
    assert held['volume_id'] == v1['id'] and held['status'] == 'attached'
    listed = osc(stack, 'alice', 'server', 'volume', 'list', server['id'])
    assert [(v['Volume ID'], v['Device']) for v in listed] == [(v1['id'], device)]
    # v1's data is the temporary volume's RBD image, in ceph2's pool; the temporary
    # volume (named by v1's name_id) and v1's old image are deleted.
    temporary = after['os-vol-mig-status-attr:name_id']
    assert temporary and temporary != v1['id']
    assert 'volume-%s' % temporary in stack.cinder.ceph.rbd('ls', 'volumes2').split()
    _wait('the temporary volume %s deleted' % temporary,
          lambda: _volume(stack, temporary) is None)
    _wait('the old RBD image of %s deleted' % v1['id'], lambda: 'volume-%s' % v1[
        'id'] not in stack.cinder.ceph.rbd('ls', 'volumes').split())
    ours = [v['id'] for v in _cinder(stack, 'GET', '/volumes?all_tenants=1').json()[
        'volumes'] if v['id'] in (v1['id'], v2['id'], temporary)]
    assert sorted(ours) == sorted([v1['id'], v2['id']])

    # The server's delete lets v1 go.
    osc(stack, 'alice', 'server', 'delete', '--wait', server['id'], fmt_json=False)
    assert _wait_status(stack, v1['id'], 'available')['attachments'] == []
