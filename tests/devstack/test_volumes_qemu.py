"""A REAL QEMU guest (TCG) writes to a Cinder volume on Ceph RBD; another reads it back
(issue 22).

One stack: Keystone, Glance, Placement, the real Cinder 29 on a one-node Ceph, and one
compute host on the libvirt driver (``qemu:///system``, as ``test_qemu``). The machine's
libvirtd is given the Ceph secret Cinder names in its connection info (client.cinder's
key, ``libvirtd.define_ceph_secret``), so QEMU opens the volume itself with librbd: a
``<disk type='network'>`` with ``protocol='rbd'`` and cephx, nothing mapped on the host.

The guest is ``guest_image``'s, from a root image whose command line says
``novalite_volume=vdb``: once booted it waits for a second disk. The test hot-plugs the
volume into running guest A (``server add volume``); A writes ``NL-VOLUME-MARKER
<uuid>`` to its first sector, reads it back from the disk and prints it on its console.
Ceph's object then holds that line. A is deleted with the volume attached; the volume is
``available`` again, and attached to a new guest B, which finds the same line and
prints it. The admin then retypes the volume, while B runs, from the type ``ceph``
(Cinder's backend on pool ``volumes``) to ``ceph2`` (pool ``volumes2``) with migration
on demand: Cinder makes a volume on ``ceph2`` and calls novalite's swap (Nova 34 swaps
only for Cinder), libvirt block-copies the disk onto the new RBD image and pivots the
guest onto it, and Cinder, told the migration is over, gives the volume its id back.
Ceph's copy in ``volumes2`` holds the line, B's disk is that image, the server still
lists the same volume. B lets go of it on ``server remove volume`` (a hot unplug), and
at the end no domain, attachment, volume or RBD image (in either pool) is left. Two
guest boots in all: TCG is slow.

Needs what ``test_qemu`` needs and what ``test_volumes`` needs; skips without them,
fails under ``CI``.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import libvirt
import pytest

from tests.devstack import clients, guest_image, libvirtd, qemu
from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder

HOST = 'qemu1'
# See qemu.libvirt_host: QEMU's user must reach the instances' files.
INSTANCES_PATH = os.path.join(tempfile.gettempdir(),
                              'novalite-qemu-vol-' + uuid.uuid4().hex[:8])
STACK = {
    **harness_cinder.VOLUME_STACK,
    'computes': (HOST,),
    'host_conf': {'compute-' + HOST: {
        'DEFAULT': {'compute_driver': 'libvirt.LibvirtDriver', 'shutdown_timeout': 30,
                    'instances_path': INSTANCES_PATH},
        'libvirt': {'virt_type': 'qemu', 'connection_uri': libvirtd.URI}}},
}
IMAGE = 'qemu-volume-guest'
BOOT_TIMEOUT = 180
VOLUME_TIMEOUT = 120
# 1 GiB in 512-byte sectors, as the guest's /sys/block/vdb/size says.
SECTORS = 2097152
WAITING = 'GUEST-VOLUME-WAIT dev=vdb'
WROTE = re.compile(r'%s dev=vdb sectors=(\d+) (%s \S+)' % (
    guest_image.VOLUME_WROTE_MARKER, guest_image.VOLUME_MARKER))
FOUND = re.compile(r'%s dev=vdb (%s \S+)' % (guest_image.VOLUME_FOUND_MARKER,
                                             guest_image.VOLUME_MARKER))
# Servers this module made: whatever of them libvirt still has goes at the end.
_made: list[str] = []


@pytest.fixture(scope='module', autouse=True)
def libvirt_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[guest_image.GuestImage]:
    """libvirtd (started here if not running) and the guest's files, before the stack
    (its compute connects at start-up); Ceph and Cinder must be installable."""
    with qemu.libvirt_host(INSTANCES_PATH, _made, tmp_path_factory,
                           needs=(harness_cinder.require_volumes,)) as image:
        yield image


@pytest.fixture(scope='module')
def qemu_stack(stack: Stack) -> Iterator[Stack]:
    """The stack, with Cinder's secret in libvirtd; its compute stops (and the secret
    goes) before the libvirtd they use does."""
    assert stack.cinder is not None, STACK
    secret = stack.cinder.secret_uuid
    libvirtd.define_ceph_secret(libvirtd.URI, secret, stack.cinder.cinder_key())
    yield stack
    stack.stop('compute-' + HOST)
    libvirtd.undefine_ceph_secret(libvirtd.URI, secret)


def _console(stack: Stack, server_id: str) -> str:
    return clients.osc(stack, 'console', 'log', 'show', server_id, fmt_json=False)


def _wait_console(stack: Stack, server_id: str, pattern: re.Pattern[str] | str
                  ) -> re.Match[str]:
    """Poll the console log until ``pattern`` matches; returns the match."""
    wanted = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
    try:
        return Stack.wait_for(lambda: wanted.search(_console(stack, server_id)),
                              BOOT_TIMEOUT, '%r on the console' % wanted.pattern,
                              interval=1)
    except TimeoutError:
        pytest.fail('console of %s after %ss:\n%s' % (server_id, BOOT_TIMEOUT,
                                                       _console(stack, server_id)))


def _boot(stack: Stack, name: str) -> str:
    """A guest from ``IMAGE``, running and waiting for its second disk."""
    created = clients.osc(stack, 'server', 'create', '--image', IMAGE, '--flavor',
                          'm1.nano', '--nic', 'none', '--wait', name, timeout=BOOT_TIMEOUT)
    _made.append(created['id'])
    assert created['status'] == 'ACTIVE', created
    # Waiting before the attach: what follows is a hot plug into a running guest.
    _wait_console(stack, created['id'], WAITING)
    return created['id']


def _volume(stack: Stack, volume_id: str) -> dict[str, Any] | None:
    assert stack.cinder is not None
    resp = stack.cinder.api('GET', '/volumes/%s' % volume_id)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    return resp.json()['volume']


def _wait_volume(stack: Stack, volume_id: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        volume = _volume(stack, volume_id)
        assert volume is not None, volume_id
        assert volume['status'] not in ('error', 'error_attaching', 'error_detaching'), volume
        return volume if volume['status'] == status else None
    return Stack.wait_for(reached, VOLUME_TIMEOUT, 'volume %s %s' % (volume_id, status),
                          interval=0.5)


def _attachments(stack: Stack, server_id: str) -> list[dict[str, Any]]:
    assert stack.cinder is not None
    resp = stack.cinder.api('GET', '/attachments?all_tenants=1&instance_id=%s' % server_id)
    resp.raise_for_status()
    return resp.json()['attachments']


def _volume_disks(server_id: str, flags: int = 0) -> list[ET.Element]:
    """The network disks of the domain (its live XML; its definition with
    ``VIR_DOMAIN_XML_INACTIVE``)."""
    conn = libvirt.open(libvirtd.URI)
    try:
        xml = conn.lookupByUUIDString(server_id).XMLDesc(flags)
    finally:
        conn.close()
    return [d for d in ET.fromstring(xml).iter('disk') if d.get('type') == 'network']


def _check_rbd_disk(server_id: str, volume_id: str, secret_uuid: str) -> None:
    """The volume is a network disk that QEMU opens over RBD with the cephx secret, in
    the running guest and in its definition."""
    for flags in (0, libvirt.VIR_DOMAIN_XML_INACTIVE):
        (disk,) = _volume_disks(server_id, flags)
        source = disk.find('source')
        assert source is not None
        assert source.get('protocol') == 'rbd'
        assert source.get('name') == 'volumes/volume-%s' % volume_id
        assert source.findall('host'), ET.tostring(disk)
        auth, target = disk.find('auth'), disk.find('target')
        assert auth is not None and target is not None, ET.tostring(disk)
        assert auth.get('username') == 'cinder'
        secret = auth.find('secret')
        assert secret is not None, ET.tostring(disk)
        assert (secret.get('type'), secret.get('uuid')) == ('ceph', secret_uuid)
        assert disk.findtext('serial') == volume_id
        assert target.get('dev') == 'vdb'


def _first_object(stack: Stack, image: str, tmp_dir: str, pool: str = 'volumes') -> bytes:
    """The first RADOS object of the RBD image ``pool/image`` as Ceph holds it (the
    image's first 4 MiB, up to what was written), read with the admin key."""
    assert stack.cinder is not None
    ceph = stack.cinder.ceph
    info = ceph.rbd('info', '--format', 'json', '%s/%s' % (pool, image))
    prefix = re.search(r'"block_name_prefix":\s*"([^"]+)"', info)
    assert prefix, info
    out = os.path.join(tmp_dir, 'object0')
    subprocess.run(['rados', '-c', ceph.conf_file, '--id', 'admin', '-p', pool, 'get',
                    '%s.%016x' % (prefix.group(1), 0), out], check=True,
                   capture_output=True, timeout=60)
    with open(out, 'rb') as data:
        return data.read()


def _retype(stack: Stack, server_id: str, volume_id: str, marker: str, tmp_dir: str
            ) -> str:
    """Retype the running guest's volume to ``ceph2`` with migration: Cinder's volume
    on ``ceph2`` is swapped in by novalite (libvirt's block copy), then Cinder gives it
    the volume's id. The RBD image the volume now is (``volumes2/volume-<name_id>``),
    once it holds ``marker`` and the guest runs on it."""
    assert stack.cinder is not None
    clients.osc(stack, 'volume', 'set', '--type', 'ceph2', '--migration-policy',
                'on-demand', volume_id, fmt_json=False)

    def migrated() -> dict[str, Any] | None:
        volume = _volume(stack, volume_id)
        assert volume is not None and volume.get('migration_status') != 'error', volume
        done = volume.get('migration_status') == 'success' and volume['status'] == 'in-use'
        return volume if done else None
    after = Stack.wait_for(migrated, VOLUME_TIMEOUT, 'volume %s migrated' % volume_id,
                           interval=0.5)
    assert after['os-vol-host-attr:host'].split('@')[1].startswith('ceph2#'), after
    assert [(a['server_id'], a['device']) for a in after['attachments']] == [
        (server_id, '/dev/vdb')], after
    (held,) = _attachments(stack, server_id)
    assert held['volume_id'] == volume_id
    name_id = after['os-vol-mig-status-attr:name_id']
    assert name_id and name_id != volume_id, after
    image = 'volumes2/volume-%s' % name_id
    # The running guest reads the new image, and its definition names it.
    for flags in (0, libvirt.VIR_DOMAIN_XML_INACTIVE):
        (disk,) = _volume_disks(server_id, flags)
        source = disk.find('source')
        assert source is not None and source.get('name') == image, ET.tostring(disk)
        assert disk.find('source/slices') is None, ET.tostring(disk)
    conn = libvirt.open(libvirtd.URI)
    try:
        capacity = conn.lookupByUUIDString(server_id).blockInfo('vdb')[0]
    finally:
        conn.close()
    assert capacity == 1024 ** 3
    # The copy: the marker the guest wrote is in ceph2's pool; the temporary volume
    # and the volume's old image in ``volumes`` are deleted.
    assert _first_object(stack, 'volume-%s' % name_id, tmp_dir, 'volumes2').startswith(
        marker.encode() + b'\n')
    Stack.wait_for(lambda: _volume(stack, name_id) is None, VOLUME_TIMEOUT,
                   'temporary volume %s deleted' % name_id, interval=0.5)
    Stack.wait_for(lambda: 'volume-%s' % volume_id not in stack.cinder.ceph.rbd(
        'ls', 'volumes').split(), VOLUME_TIMEOUT, 'old image deleted', interval=0.5)
    listed = clients.osc(stack, 'server', 'volume', 'list', server_id)
    assert [v['Volume ID'] for v in listed] == [volume_id]
    return 'volume-%s' % name_id


def test_a_guest_writes_a_volume_that_another_guest_reads(
        libvirt_host: guest_image.GuestImage, qemu_stack: Stack, tmp_path: Any) -> None:
    stack = qemu_stack
    assert stack.cinder is not None
    started = time.monotonic()
    assert qemu.upload_guest(stack, libvirt_host, 'qemu-volume',
                             guest_image.VOLUME_CMDLINE) == IMAGE
    volume_id = clients.osc(stack, 'volume', 'create', '--size', '1', '--type', 'ceph',
                            'qemu-vol')['id']
    _wait_volume(stack, volume_id, 'available')

    # Guest A: the volume hot-plugged; it writes the marker and reads it back.
    server_a = _boot(stack, 'qemu-vol-a')
    clients.osc(stack, 'server', 'add', 'volume', server_a, volume_id, fmt_json=False)
    attached = _wait_volume(stack, volume_id, 'in-use')
    assert [(a['server_id'], a['device']) for a in attached['attachments']] == [
        (server_a, '/dev/vdb')], attached
    _check_rbd_disk(server_a, volume_id, stack.cinder.secret_uuid)
    wrote = _wait_console(stack, server_a, WROTE)
    assert int(wrote.group(1)) == SECTORS
    marker = wrote.group(2)
    print('\nguest A wrote %r %.1f s into the test' % (marker, time.monotonic() - started))
    assert _first_object(stack, 'volume-%s' % volume_id, str(tmp_path)).startswith(
        marker.encode() + b'\n')

    # A deleted with the volume attached: the volume is free again.
    clients.osc(stack, 'server', 'delete', '--wait', server_a, fmt_json=False,
                timeout=BOOT_TIMEOUT)
    assert server_a not in qemu.domain_uuids()
    assert _wait_volume(stack, volume_id, 'available')['attachments'] == []
    assert _attachments(stack, server_a) == []

    # Guest B: the same volume hot-plugged; it finds A's marker.
    server_b = _boot(stack, 'qemu-vol-b')
    clients.osc(stack, 'server', 'add', 'volume', server_b, volume_id, fmt_json=False)
    _wait_volume(stack, volume_id, 'in-use')
    _check_rbd_disk(server_b, volume_id, stack.cinder.secret_uuid)
    found = _wait_console(stack, server_b, FOUND)
    assert found.group(1) == marker
    assert guest_image.VOLUME_WROTE_MARKER not in _console(stack, server_b)

    # B's volume retyped to ceph2 (by the admin) while B runs: Cinder migrates it
    # through novalite's swap, libvirt copies the disk onto the new RBD image and
    # pivots the guest onto it.
    image = _retype(stack, server_b, volume_id, marker, str(tmp_path))

    # A hot unplug: the disk leaves the running guest and its definition.
    clients.osc(stack, 'server', 'remove', 'volume', server_b, volume_id, fmt_json=False)
    assert _wait_volume(stack, volume_id, 'available')['attachments'] == []
    assert _volume_disks(server_b) == []
    assert _volume_disks(server_b, libvirt.VIR_DOMAIN_XML_INACTIVE) == []
    assert clients.osc(stack, 'server', 'volume', 'list', server_b) == []

    clients.osc(stack, 'server', 'delete', '--wait', server_b, fmt_json=False,
                timeout=BOOT_TIMEOUT)
    clients.osc(stack, 'volume', 'delete', volume_id, fmt_json=False)
    Stack.wait_for(lambda: _volume(stack, volume_id) is None, VOLUME_TIMEOUT,
                   'volume %s deleted' % volume_id, interval=0.5)
    print('test wall time %.1f s' % (time.monotonic() - started))
    assert not {server_a, server_b} & qemu.domain_uuids()
    assert _attachments(stack, server_b) == []
    images = {pool: stack.cinder.ceph.rbd('ls', pool).split()
              for pool in ('volumes', 'volumes2')}
    assert 'volume-%s' % volume_id not in images['volumes'], images
    assert image not in images['volumes2'], images
    for server_id in (server_a, server_b):
        assert clients.allocations(stack, server_id) == {}
