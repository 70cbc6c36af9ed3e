"""novalite-manage image_property show / set on MariaDB, with Nova's answers and exit
codes (the deployment and its servers: tests/unit/cmd/test_manage_libvirt.py)."""
from __future__ import annotations

from oslo_utils import uuidutils

from novalite.cmd.manage import image_property
from tests.unit.cmd.test_manage_libvirt import _module_cloud, cloud  # noqa: F401


def test_show(cloud):  # noqa: F811
    uuid = cloud.add_server(sysmeta={'image_hw_disk_bus': 'virtio', 'image_os_distro': ''})
    assert cloud.manage('image_property', 'show', uuid, 'hw_disk_bus') == (0, 'virtio\n')
    for missing in ('hw_cdrom_bus', 'os_distro'):
        rc, out = cloud.manage('image_property', 'show', uuid, missing)
        assert (rc, out) == (3, 'Image property %s not found for instance %s.\n'
                             % (missing, uuid))
    nobody = uuidutils.generate_uuid()
    rc, out = cloud.manage('image_property', 'show', nobody, 'hw_disk_bus')
    assert rc == 2 and nobody in out
    unmapped = cloud.add_server(mapped=False, sysmeta={'image_hw_disk_bus': 'virtio'})
    assert cloud.manage('image_property', 'show', unmapped, 'hw_disk_bus')[0] == 2


def test_set_writes_the_instance_and_its_request_spec(cloud):  # noqa: F811
    uuid = cloud.add_server(sysmeta={'image_hw_disk_bus': 'ide', 'image_min_ram': '0'},
                            image_properties={'hw_disk_bus': 'ide', 'os_distro': 'cirros'})
    rc, out = cloud.manage('image_property', 'set', uuid, '--property', 'hw_disk_bus=virtio',
                           '--property', 'hw_cdrom_bus=sata', '--property',
                           'os_command_line=console=ttyS0 root=/dev/vda')
    assert (rc, out) == (0, '')
    assert cloud.sysmeta(uuid) == {
        'image_hw_disk_bus': 'virtio', 'image_hw_cdrom_bus': 'sata', 'image_min_ram': '0',
        'image_os_command_line': 'console=ttyS0 root=/dev/vda'}
    assert cloud.spec_image_properties(uuid) == {
        'hw_disk_bus': 'virtio', 'hw_cdrom_bus': 'sata', 'os_distro': 'cirros',
        'os_command_line': 'console=ttyS0 root=/dev/vda'}
    assert cloud.manage('image_property', 'show', uuid, 'hw_cdrom_bus') == (0, 'sata\n')

    shelved = cloud.add_server(vm_state='shelved')
    assert cloud.manage('image_property', 'set', shelved, '--property',
                        'hw_vif_multiqueue_enabled=true')[0] == 0
    assert cloud.sysmeta(shelved) == {'image_hw_vif_multiqueue_enabled': 'true'}


def test_set_refusals_change_nothing(cloud):  # noqa: F811
    before = {'image_hw_disk_bus': 'ide'}
    active = cloud.add_server(vm_state='active', sysmeta=before)
    rc, out = cloud.manage('image_property', 'set', active, '--property',
                           'hw_disk_bus=virtio')
    assert rc == 3 and 'vm_state active' in out and 'STOPPED' in out

    stopped = cloud.add_server(sysmeta=before, image_properties={'hw_disk_bus': 'ide'})
    for argv, code, says in (
            (('--property', 'hw_disk_bus'), 4, 'key=value'),
            ((), 4, 'key=value'),
            (('--property', 'hw_disk_bus=virtio', '--property', 'hw_nonsense=1'), 5,
             'hw_nonsense'),
            (('--property', 'hw_disk_bus=floppy-ish'), 6, 'hw_disk_bus'),
            (('--property', 'hw_cpu_cores=two'), 6, 'hw_cpu_cores'),
            (('--property', 'hw_boot_menu=perhaps'), 6, 'hw_boot_menu')):
        rc, out = cloud.manage('image_property', 'set', stopped, *argv)
        assert rc == code and says in out, (argv, rc, out)
    for uuid in (active, stopped):
        assert cloud.sysmeta(uuid) == before
    assert cloud.spec_image_properties(stopped) == {'hw_disk_bus': 'ide'}
    nobody = uuidutils.generate_uuid()
    rc, out = cloud.manage('image_property', 'set', nobody, '--property',
                           'hw_disk_bus=virtio')
    assert rc == 2 and nobody in out


def test_the_properties_novalite_reads_are_known():
    # What the libvirt driver and the scheduler's filters read from an image.
    for name in ('hw_machine_type', 'hw_video_model', 'os_command_line', 'hw_architecture',
                 'img_hv_type', 'hw_vm_mode', 'img_hv_requested_version'):
        assert name in image_property.KNOWN_PROPERTIES
    assert image_property.validate(['hw_machine_type=pc=odd']) == {
        'hw_machine_type': 'pc=odd'}
