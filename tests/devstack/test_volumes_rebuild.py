"""Rebuilding a volume-backed server with the real Cinder on Ceph RBD (API 2.93).

openstackclient rebuilds a boot-from-volume server with another image; Cinder re-images
the root volume (``os-reimage``, reserved for the server) and its nova notifier posts
``volume-reimaged`` to novalite's compute endpoint, found in Keystone's catalog as the
``[nova]`` user of Cinder's configuration (a service): without that event the rebuild
would end in ERROR. The volume then holds the new image's metadata, is ``in-use`` with
one attachment, a new one. The stack is the shared volume stack of test_volumes.
"""
from __future__ import annotations

from pathlib import Path

from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.test_keystone import osc
from tests.devstack.test_volumes import (  # noqa: F401 - fixtures
    FLAVOR,
    IMAGE,
    _attachments,
    _server,
    _volume,
    _volume_ids,
    _volumes_possible,
    cleanup,
)

STACK = harness_cinder.VOLUME_STACK


def test_rebuild_at_2_93_reimages_the_root_volume(volume_stack: Stack,
                                                  cleanup: list,  # noqa: F811
                                                  tmp_path: Path) -> None:
    stack = volume_stack
    data = tmp_path / 'other.img'
    data.write_bytes(b'novalite re-image\n' * 512)
    other = osc(stack, 'alice', 'image', 'create', '--disk-format', 'raw',
                '--container-format', 'bare', '--file', str(data), 'reimage-other')
    cleanup.append(('image', other['id']))
    server = osc(stack, 'alice', 'server', 'create', '--boot-from-volume', '1', '--image',
                 IMAGE, '--flavor', FLAVOR, '--nic', 'none', '--delete-on-termination',
                 '--wait', 'bfv-reimage')
    cleanup.append(('server', server['id']))
    (volume_id,) = _volume_ids(stack, server['id'])
    before = _volume(stack, volume_id)
    assert before is not None
    assert before['volume_image_metadata']['image_id'] != other['id']
    (old,) = _attachments(stack, server['id'])

    osc(stack, 'alice', '--os-compute-api-version', '2.93', 'server', 'rebuild',
        '--reimage-boot-volume', '--image', other['id'], '--wait', server['id'],
        fmt_json=False)

    rebuilt = _server(stack, server['id'])
    assert rebuilt['status'] == 'ACTIVE', rebuilt.get('fault')
    assert rebuilt['image'] == ''
    volume = _volume(stack, volume_id)
    assert volume is not None
    assert volume['volume_image_metadata']['image_id'] == other['id']
    assert volume['status'] == 'in-use'
    assert [a['server_id'] for a in volume['attachments']] == [server['id']]
    (new,) = _attachments(stack, server['id'])
    assert new['id'] != old['id']
    assert new['status'] == 'attached'
