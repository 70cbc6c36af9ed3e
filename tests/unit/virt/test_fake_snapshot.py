"""The fake driver's snapshot: data in the format it declares, as Glance's format
inspection (oslo.utils' format_inspector, which Glance runs on every upload) sees it."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from oslo_utils.imageutils import format_inspector

from novalite import objects
from novalite.compute import task_states
from novalite.virt import fake

UUID = '8b4c3d0e-6f0a-4d55-9a43-2f0f5d3c1e11'


class RecordingGlance:
    """What the driver sends Glance: the field updates and the uploaded file."""

    def __init__(self) -> None:
        self.updates: dict = {}
        self.uploads: dict[str, bytes] = {}

    def update(self, context, image_id, changes):
        self.updates.setdefault(image_id, {}).update(changes)
        return {}

    def upload(self, context, image_id, path):
        with open(path, 'rb') as data:
            self.uploads[image_id] = data.read()


@pytest.fixture
def glance(monkeypatch):
    recorder = RecordingGlance()
    monkeypatch.setattr(fake.glance, 'API', lambda: recorder)
    return recorder


def _guest(image_format: str | None, root_gb: int = 1):
    objects.register_all()
    drv = fake.FakeDriver()
    drv.init_host('fake-host')
    sysmeta = {'image_disk_format': image_format} if image_format else {}
    instance = objects.Instance(uuid=UUID, system_metadata=sysmeta,
                                flavor=objects.Flavor(vcpus=1, memory_mb=64,
                                                      root_gb=root_gb, ephemeral_gb=0))
    drv.spawn(None, instance, None, [], None, {})
    return drv, instance


def _inspect(tmp_path, data: bytes) -> format_inspector.FileInspector:
    path = tmp_path / 'upload'
    path.write_bytes(data)
    inspector = format_inspector.detect_file_format(str(path))
    inspector.safety_check()
    return inspector


@pytest.mark.parametrize('image_format,expected', [
    ('qcow2', 'qcow2'), ('raw', 'raw'), ('vmdk', 'raw'), ('iso', 'raw'), (None, 'raw')])
def test_snapshot_data_matches_the_disk_format_it_sets(tmp_path, glance, image_format,
                                                       expected):
    drv, instance = _guest(image_format, root_gb=2)
    states = []
    drv.snapshot(None, instance, 'img-1',
                 lambda task_state, expected_state=None: states.append(task_state))
    assert states == [task_states.IMAGE_PENDING_UPLOAD, task_states.IMAGE_UPLOADING]
    assert glance.updates['img-1'] == {'disk_format': expected, 'container_format': 'bare'}
    inspector = _inspect(tmp_path, glance.uploads['img-1'])
    assert str(inspector) == expected
    if expected == 'qcow2':
        assert inspector.virtual_size == 2 * fake.GiB


def test_empty_qcow2_is_a_valid_image(tmp_path):
    path = tmp_path / 'disk.qcow2'
    path.write_bytes(fake.empty_qcow2(40 * fake.GiB + 1))
    inspector = _inspect(tmp_path, path.read_bytes())
    assert (str(inspector), inspector.virtual_size) == ('qcow2', 40 * fake.GiB + 1)
    if shutil.which('qemu-img'):
        subprocess.run(['qemu-img', 'check', str(path)], check=True, capture_output=True)


def test_empty_qcow2_refuses_a_size_one_l1_cluster_cannot_map():
    with pytest.raises(ValueError):
        fake.empty_qcow2(8192 * 512 * 1024 ** 2 + 1)
