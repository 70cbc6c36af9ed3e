"""Copying a resized instance's set-aside files: contents and modes, not libvirt's marks."""
from __future__ import annotations

import os

import pytest

from novalite.virt.libvirt import migration

LIBVIRT_MARK = 'trusted.libvirt.security.ref_dac'


def test_copy_in_leaves_libvirts_disk_bookkeeping_behind(tmp_path):
    source, target = tmp_path / 'inst_resize', tmp_path / 'inst'
    source.mkdir()
    disk = source / 'disk'
    disk.write_bytes(b'qcow2 data')
    disk.chmod(0o640)
    (source / migration.SAVED_XML).write_text('<domain/>')
    try:
        os.setxattr(disk, LIBVIRT_MARK, b'1')
    except OSError as exc:
        pytest.skip('no trusted extended attributes here: %s' % exc)
    migration.copy_in(str(source), str(target))
    copied = target / 'disk'
    assert copied.read_bytes() == b'qcow2 data'
    assert copied.stat().st_mode & 0o777 == 0o640
    assert LIBVIRT_MARK not in os.listxattr(copied)
    assert not (target / migration.SAVED_XML).exists()
