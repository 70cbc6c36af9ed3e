"""The libvirt driver's diagnostics and snapshot of a guest (libvirt test:///)."""
from __future__ import annotations

from novalite.compute import task_states
from tests.unit.virt.conftest import image_meta, make_instance

DATA = b'\0' * 4096


def test_diagnostics_of_a_running_guest(make_driver, ctxt, image_server):
    drv = make_driver('host1')
    image = image_server.add_image(DATA, disk_format='raw')
    instance = make_instance(1, image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    instance.launched_at = None
    instance.config_drive = ''
    diags = drv.get_instance_diagnostics(instance)
    assert diags['state'] == 'running'
    assert diags['driver'] == 'libvirt'
    assert diags['memory_details']['maximum'] > 0
    assert len(diags['cpu_details']) >= 1


def test_snapshot_uploads_the_root_disk(make_driver, ctxt, image_server):
    drv = make_driver('host1')
    image = image_server.add_image(DATA, disk_format='raw')
    instance = make_instance(1, image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    target = image_server.add_image(b'', disk_format='raw', status='queued')
    states = []
    drv.snapshot(ctxt, instance, target['id'],
                 lambda task_state, expected_state=None: states.append(task_state))
    assert states == [task_states.IMAGE_PENDING_UPLOAD, task_states.IMAGE_UPLOADING]
    assert image_server.images[target['id']]['status'] == 'active'
