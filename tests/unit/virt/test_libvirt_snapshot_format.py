"""The libvirt driver's uploads to Glance pass Glance's format inspection: a snapshot
(createImage, createBackup and shelve all go through it) is the format it declares in
``disk_format``; and pre-caching fetches into the image cache that spawn reads."""
from __future__ import annotations

import pytest
from oslo_utils.imageutils import format_inspector

from novalite.compute import task_states
from novalite.conf import CONF
from novalite.image import glance
from tests.unit.virt.conftest import image_meta, make_instance

DATA = b'\0' * 4096


@pytest.fixture(params=['qcow2', 'raw'])
def drv(request, make_driver):
    CONF.set_override('images_type', request.param, group='libvirt')
    try:
        yield make_driver('snaphost')
    finally:
        CONF.clear_override('images_type', group='libvirt')


def test_snapshot_data_is_the_declared_disk_format(drv, ctxt, image_server, tmp_path):
    base = image_server.add_image(DATA, disk_format='raw')
    instance = make_instance(image_ref=base['id'])
    drv.spawn(ctxt, instance, image_meta(base), [], None, {})
    snap = glance.API().create(ctxt, {'name': 'snap', 'disk_format': 'vmdk',
                                      'container_format': 'ovf'})
    states = []
    drv.snapshot(ctxt, instance, snap['id'],
                 lambda task_state, expected_state=None: states.append(task_state))
    assert states == [task_states.IMAGE_PENDING_UPLOAD, task_states.IMAGE_UPLOADING]
    stored = image_server.images[snap['id']]
    assert stored['status'] == 'active' and stored['container_format'] == 'bare'
    path = tmp_path / 'uploaded'
    path.write_bytes(image_server.data[snap['id']])
    inspector = format_inspector.detect_file_format(str(path))
    inspector.safety_check()
    assert str(inspector) == stored['disk_format']
    drv.destroy(ctxt, instance)


def test_cache_image_fetches_into_the_image_cache(drv, ctxt, image_server):
    image = image_server.add_image(DATA, disk_format='raw')
    assert drv.cache_image(ctxt, image['id']) is True
    assert drv.cache_image(ctxt, image['id']) is False
    assert image_server.file_gets == {image['id']: 1}
    # A spawn finds it there.
    instance = make_instance(image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    assert image_server.file_gets == {image['id']: 1}
    drv.destroy(ctxt, instance)
