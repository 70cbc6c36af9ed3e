"""os-hosts' pure parts: the resource table, and which drivers answer host actions."""
from __future__ import annotations

import pytest

from novalite import objects
from novalite.compute import host_actions
from novalite.virt import driver, fake
from novalite.virt.libvirt import driver as libvirt_driver


def _instance(project: str, vcpus: int, memory_mb: int, root_gb: int,
              ephemeral_gb: int) -> objects.Instance:
    return objects.Instance(project_id=project, vcpus=vcpus, memory_mb=memory_mb,
                            root_gb=root_gb, ephemeral_gb=ephemeral_gb)


def test_resource_table_rows_in_nova_order():
    objects.register_all()
    node = objects.ComputeNode(vcpus=8, memory_mb=4096, local_gb=100, vcpus_used=3,
                               memory_mb_used=1536, local_gb_used=4)
    instances = [_instance('p1', 1, 512, 1, 0), _instance('p2', 2, 1024, 2, 1),
                 _instance('p1', 1, 256, 1, 2)]
    rows = [r['resource'] for r in host_actions.resource_table('h1', node, instances)]
    assert [(r['project'], r['cpu'], r['memory_mb'], r['disk_gb']) for r in rows] == [
        ('(total)', 8, 4096, 100), ('(used_now)', 3, 1536, 4), ('(used_max)', 4, 1792, 7),
        ('p1', 2, 768, 4), ('p2', 2, 1024, 3)]
    assert {r['host'] for r in rows} == {'h1'}


def test_resource_table_of_an_empty_host():
    objects.register_all()
    node = objects.ComputeNode(vcpus=2, memory_mb=512, local_gb=10, vcpus_used=0,
                               memory_mb_used=0, local_gb_used=0)
    rows = host_actions.resource_table('h1', node, [])
    assert [r['resource']['project'] for r in rows] == ['(total)', '(used_now)',
                                                         '(used_max)']


@pytest.mark.parametrize('name', ['host_power_action', 'host_maintenance_mode',
                                  'set_host_enabled'])
def test_libvirt_leaves_host_actions_to_the_interface_which_refuses(name):
    # As in Nova: the API answers 501 (set_host_enabled: the manager answers itself).
    assert getattr(libvirt_driver.LibvirtDriver, name) is getattr(driver.ComputeDriver, name)
    with pytest.raises(NotImplementedError):
        getattr(driver.ComputeDriver, name)(object(), *(['h'] if name ==
                                                        'host_maintenance_mode' else []),
                                            True)


def test_fake_driver_answers_as_nova_fake():
    drv = fake.FakeDriver()
    assert [drv.host_power_action(a) for a in ('reboot', 'shutdown', 'startup')] == [
        'reboot', 'shutdown', 'startup']
    assert (drv.host_maintenance_mode('h', True), drv.host_maintenance_mode('h', False)) \
        == ('on_maintenance', 'off_maintenance')
    assert (drv.set_host_enabled(True), drv.set_host_enabled(False)) == ('enabled',
                                                                          'disabled')
