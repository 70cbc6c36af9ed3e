"""A data volume follows its server through shelve offload, unshelve and evacuation, with
the real Cinder on Ceph RBD, driven by openstackclient.

As Nova: an offloaded server keeps its volume ``reserved`` by an attachment with no
host; the host it comes back on (unshelve) or is rebuilt on (evacuate) gets the volume's
attachment, and the old attachment is gone from Cinder.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.devstack import test_volumes as volumes
from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.test_keystone import osc, rest

STACK = harness_cinder.VOLUME_STACK
# The volume tests' fixture: what a test made is deleted after it.
cleanup = volumes.cleanup
_attachments, _server, _wait = volumes._attachments, volumes._server, volumes._wait
_wait_status = volumes._wait_status


@pytest.fixture(scope='module', autouse=True)
def _volumes_possible() -> None:
    harness_cinder.require_volumes()


def _server_with_volume(stack: Stack, cleanup: list, name: str) -> tuple[str, str]:
    volume = osc(stack, 'alice', 'volume', 'create', '--size', '1', name + '-data')
    cleanup.append(('volume', volume['id']))
    _wait_status(stack, volume['id'], 'available')
    server = osc(stack, 'alice', 'server', 'create', '--image', volumes.IMAGE, '--flavor',
                 volumes.FLAVOR, '--nic', 'none', '--wait', name)
    cleanup.append(('server', server['id']))
    osc(stack, 'alice', 'server', 'add', 'volume', server['id'], volume['id'])
    _attached_to(stack, volume['id'], _server(stack, server['id'])['OS-EXT-SRV-ATTR:host'])
    return server['id'], volume['id']


def _attached_to(stack: Stack, volume_id: str, host: str) -> dict[str, Any]:
    """The volume in use through one attachment, on ``host`` (Cinder's view)."""
    def there() -> dict[str, Any] | None:
        volume = _wait_status(stack, volume_id, 'in-use')
        (attachment,) = volume['attachments']
        return attachment if attachment['host_name'] == host else None
    return _wait('volume %s attached on %s' % (volume_id, host), there)


def test_shelve_offload_reserves_the_volume_and_unshelve_attaches_it_again(
        volume_stack: Stack, cleanup: list) -> None:
    stack = volume_stack
    server_id, volume_id = _server_with_volume(stack, cleanup, 'vol-shelve')
    (before,) = _attachments(stack, server_id)

    osc(stack, 'alice', 'server', 'shelve', '--offload', '--wait', server_id,
        fmt_json=False)
    shelved = _server(stack, server_id)
    assert shelved['status'] == 'SHELVED_OFFLOADED'
    assert shelved['OS-EXT-SRV-ATTR:host'] is None
    reserved = _wait_status(stack, volume_id, 'reserved')
    (attachment,) = _attachments(stack, server_id)
    assert attachment['id'] != before['id']
    assert attachment['status'] == 'reserved'
    # No host: Cinder's volume lists no attachment made to one.
    assert not [a for a in reserved['attachments'] if a.get('host_name')], reserved

    osc(stack, 'alice', 'server', 'unshelve', '--wait', server_id, fmt_json=False)
    back = _server(stack, server_id)
    assert back['status'] == 'ACTIVE'
    on = _attached_to(stack, volume_id, back['OS-EXT-SRV-ATTR:host'])
    assert on['server_id'] == server_id
    (now,) = _attachments(stack, server_id)
    assert now['id'] == attachment['id'] and now['status'] == 'attached'


def test_attach_and_detach_while_shelved_offloaded(volume_stack: Stack,
                                                   cleanup: list) -> None:
    stack = volume_stack
    server_id, kept = _server_with_volume(stack, cleanup, 'vol-offloaded')
    added = osc(stack, 'alice', 'volume', 'create', '--size', '1', 'vol-offloaded-added')
    cleanup.append(('volume', added['id']))
    _wait_status(stack, added['id'], 'available')
    osc(stack, 'alice', 'server', 'shelve', '--offload', '--wait', server_id,
        fmt_json=False)

    osc(stack, 'alice', 'server', 'add', 'volume', server_id, added['id'])
    # Held for the server with no host (Nova completes it: in-use; novalite: reserved).
    held = _wait('volume %s held' % added['id'], lambda: (lambda v: v if v and v['status'] in (
        'reserved', 'in-use') else None)(volumes._volume(stack, added['id'])))
    assert not [a for a in held['attachments'] if a.get('host_name')], held
    osc(stack, 'alice', 'server', 'remove', 'volume', server_id, kept, fmt_json=False)
    _wait_status(stack, kept, 'available')
    assert [a['volume_id'] for a in _attachments(stack, server_id)] == [added['id']]

    osc(stack, 'alice', 'server', 'unshelve', '--wait', server_id, fmt_json=False)
    back = _server(stack, server_id)
    assert back['status'] == 'ACTIVE'
    _attached_to(stack, added['id'], back['OS-EXT-SRV-ATTR:host'])
    listed = osc(stack, 'alice', 'server', 'volume', 'list', server_id)
    assert [(v['Volume ID'], v['Device']) for v in listed] == [(added['id'], '/dev/vdb')]


def test_evacuate_attaches_the_volume_on_the_new_host(volume_stack: Stack,
                                                      cleanup: list) -> None:
    stack = volume_stack
    server_id, volume_id = _server_with_volume(stack, cleanup, 'vol-evacuee')
    source = _server(stack, server_id)['OS-EXT-SRV-ATTR:host']
    (dest,) = {'hostA', 'hostB'} - {source}
    (before,) = _attachments(stack, server_id)
    assert before['status'] == 'attached'
    stack.kill('compute-' + source)
    try:
        stack.wait_for(lambda: any(
            s['host'] == source and s['state'] == 'down'
            for s in stack.api('GET', '/os-services').json()['services']), 60,
            '%s seen down' % source)
        resp = rest(stack, 'admin', 'POST', '/servers/%s/action' % server_id,
                    json={'evacuate': {}})
        assert resp.status_code == 200, resp.text
        stack.wait_for(lambda: _server(stack, server_id)['status'] in ('ACTIVE', 'ERROR'),
                       180, 'server %s evacuated' % server_id)
        evacuated = _server(stack, server_id)
        assert evacuated['status'] == 'ACTIVE', evacuated.get('fault')
        assert evacuated['OS-EXT-SRV-ATTR:host'] == dest
        _attached_to(stack, volume_id, dest)
        (now,) = _attachments(stack, server_id)
        assert now['id'] != before['id']
    finally:
        stack.start('compute-' + source)
    # The dead host back: the volume stays where the server is now.
    _attached_to(stack, volume_id, dest)
    assert len(_attachments(stack, server_id)) == 1
