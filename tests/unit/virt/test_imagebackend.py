"""Instance disks with the real qemu-img, and without it (the explicit degraded modes)."""
from __future__ import annotations

import json
import subprocess

import pytest

from novalite import exception
from novalite.virt.libvirt import imagebackend

GiB = 1024 ** 3


def _qemu_img(*args) -> str:
    return subprocess.run(('qemu-img',) + args, check=True, capture_output=True,
                          text=True).stdout


def _info(path) -> dict:
    return json.loads(_qemu_img('info', '--output=json', str(path)))


@pytest.fixture
def raw_base(tmp_path):
    path = tmp_path / 'base.raw'
    path.write_bytes(b'\x01' * 1024 * 1024)
    return str(path)


@pytest.fixture
def qcow2_base(tmp_path):
    path = tmp_path / 'base.qcow2'
    _qemu_img('create', '-f', 'qcow2', str(path), '64M')
    return str(path)


def test_qcow2_overlay_on_a_raw_base_has_the_flavor_size(tmp_path, raw_base):
    backend = imagebackend.Backend('qcow2', 'qemu')
    disk = backend.create_root(raw_base, 'raw', str(tmp_path / 'disk'), 2)
    assert disk.format == 'qcow2'
    info = _info(disk.path)
    assert info['format'] == 'qcow2'
    assert info['virtual-size'] == 2 * GiB
    assert info['backing-filename'] == raw_base
    assert info['backing-filename-format'] == 'raw'


def test_qcow2_overlay_of_size_zero_keeps_the_image_size(tmp_path, qcow2_base):
    backend = imagebackend.Backend('qcow2', 'qemu')
    disk = backend.create_root(qcow2_base, 'qcow2', str(tmp_path / 'disk'), 0)
    info = _info(disk.path)
    assert info['virtual-size'] == 64 * 1024 * 1024
    assert info['backing-filename-format'] == 'qcow2'


def test_raw_copies_a_raw_base_and_grows_it(tmp_path, raw_base):
    backend = imagebackend.Backend('raw', 'qemu')
    disk = backend.create_root(raw_base, 'raw', str(tmp_path / 'disk'), 1)
    assert disk.format == 'raw'
    assert _info(disk.path)['virtual-size'] == GiB
    with open(disk.path, 'rb') as f:
        assert f.read(16) == b'\x01' * 16


def test_raw_converts_a_qcow2_base(tmp_path, qcow2_base):
    disk = imagebackend.Backend('raw', 'qemu').create_root(
        qcow2_base, 'qcow2', str(tmp_path / 'disk'), 1)
    info = _info(disk.path)
    assert (info['format'], info['virtual-size']) == ('raw', GiB)


def test_image_whose_data_is_not_its_disk_format_is_refused(tmp_path, qcow2_base):
    backend = imagebackend.Backend('qcow2', 'qemu')
    with pytest.raises(exception.ImageServiceError, match='data is qcow2 but its '
                       'disk_format is raw'):
        backend.create_root(qcow2_base, 'raw', str(tmp_path / 'disk'), 1)


def test_image_with_a_backing_file_of_its_own_is_refused(tmp_path, raw_base):
    sneaky = tmp_path / 'sneaky.qcow2'
    _qemu_img('create', '-f', 'qcow2', '-F', 'raw', '-b', raw_base, str(sneaky))
    with pytest.raises(exception.ImageServiceError, match='backing file'):
        imagebackend.Backend('qcow2', 'qemu').create_root(str(sneaky), 'qcow2',
                                                          str(tmp_path / 'disk'), 1)


def test_flavor_disk_smaller_than_the_image_is_refused(tmp_path):
    base = tmp_path / 'big.qcow2'
    _qemu_img('create', '-f', 'qcow2', str(base), '3G')
    with pytest.raises(exception.FlavorDiskTooSmall):
        imagebackend.Backend('qcow2', 'qemu').create_root(str(base), 'qcow2',
                                                          str(tmp_path / 'disk'), 2)


def test_blank_qcow2_disk(tmp_path):
    disk = imagebackend.Backend('qcow2', 'qemu').create_blank(str(tmp_path / 'eph'), 3)
    assert (_info(disk.path)['format'], _info(disk.path)['virtual-size']) == ('qcow2', 3 * GiB)


# -- without qemu-img ----------------------------------------------------------------------

def test_without_qemu_img_the_test_driver_gets_sparse_placeholders(tmp_path, raw_base, caplog):
    backend = imagebackend.Backend('qcow2', 'test', qemu_img=None)
    assert 'qemu-img not found' in caplog.text
    disk = backend.create_root(raw_base, 'qcow2', str(tmp_path / 'disk'), 5)
    assert disk.format == 'raw'
    stat = (tmp_path / 'disk').stat()
    assert stat.st_size == 5 * GiB
    assert stat.st_blocks == 0


def test_without_qemu_img_a_real_hypervisor_gets_no_qcow2(tmp_path, raw_base):
    backend = imagebackend.Backend('qcow2', 'qemu', qemu_img=None)
    with pytest.raises(exception.DiskCreationFailed, match='qemu-img is not installed'):
        backend.create_root(raw_base, 'raw', str(tmp_path / 'disk'), 1)


def test_without_qemu_img_a_raw_copy_of_a_raw_image_still_works(tmp_path, raw_base):
    backend = imagebackend.Backend('raw', 'qemu', qemu_img=None)
    disk = backend.create_root(raw_base, 'raw', str(tmp_path / 'disk'), 1)
    assert (disk.format, (tmp_path / 'disk').stat().st_size) == ('raw', GiB)


def test_qemu_img_failure_names_the_disk(tmp_path, raw_base):
    backend = imagebackend.Backend('qcow2', 'qemu')
    with pytest.raises(exception.DiskCreationFailed, match=str(tmp_path / 'nodir')):
        backend.create_root(raw_base, 'raw', str(tmp_path / 'nodir' / 'disk'), 1)
