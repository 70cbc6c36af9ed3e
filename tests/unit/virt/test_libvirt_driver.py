"""LibvirtDriver on libvirt's test driver: one simulated host per node file."""
from __future__ import annotations

import json
import os
import threading
import time

import libvirt
import pytest

from novalite import exception
from novalite.compute import power_state
from novalite.compute.provider_tree import ProviderTree
from novalite.conf import CONF
from novalite.virt.libvirt import host as libvirt_host
from tests.unit.virt.conftest import image_meta, make_instance

DATA = b'\0' * 4096


@pytest.fixture
def drv(make_driver):
    return make_driver('host1', cpus=8, memory_mb=16384)


@pytest.fixture
def image(image_server):
    return image_server.add_image(DATA, disk_format='raw')


def _spawn(drv, ctxt, image, **kwargs):
    instance = make_instance(image_ref=image['id'], **kwargs)
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    return instance


def _state(drv, instance):
    return drv.get_info(instance).state


def test_spawn_defines_and_starts_a_guest_with_its_disk(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image, vcpus=2, memory_mb=256)
    assert _state(drv, instance) == power_state.RUNNING
    assert drv.list_instance_uuids() == [instance.uuid]
    assert drv.instance_exists(instance)
    directory = drv.instance_dir(instance)
    assert os.path.exists(os.path.join(directory, 'disk'))
    guest = drv.host.get_guest(instance.uuid)
    assert guest.name == instance.name
    assert guest.resources() == (2, 256)
    assert os.path.join(directory, 'disk') in guest.xml()
    assert drv.image_cache.cached_images() != []


def test_destroy_removes_domain_and_files_and_tolerates_a_missing_guest(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    drv.destroy(ctxt, instance)
    assert drv.list_instance_uuids() == []
    assert not os.path.exists(drv.instance_dir(instance))
    with pytest.raises(exception.InstanceNotFound):
        drv.get_info(instance)
    drv.destroy(ctxt, instance)  # already gone: still fine
    assert not drv.instance_exists(instance)


def test_destroy_of_a_suspended_guest_drops_its_saved_state(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    drv.suspend(ctxt, instance)
    drv.destroy(ctxt, instance)
    assert drv.list_instance_uuids() == []


def test_power_off_and_on(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    drv.power_off(instance)
    assert _state(drv, instance) == power_state.SHUTDOWN
    drv.power_on(ctxt, instance)
    assert _state(drv, instance) == power_state.RUNNING
    drv.power_off(instance, timeout=5)  # clean shutdown first
    assert _state(drv, instance) == power_state.SHUTDOWN


def test_reboot_soft_and_hard_leave_the_guest_running(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    drv.reboot(ctxt, instance, reboot_type='SOFT')
    assert _state(drv, instance) == power_state.RUNNING
    drv.reboot(ctxt, instance, reboot_type='HARD')
    assert _state(drv, instance) == power_state.RUNNING


def test_soft_reboot_falls_back_to_hard_when_shutdown_times_out(drv, ctxt, image, caplog):
    instance = _spawn(drv, ctxt, image)
    CONF.set_override('wait_soft_reboot_seconds', 0, group='libvirt')
    try:
        drv.reboot(ctxt, instance, reboot_type='SOFT')
    finally:
        CONF.clear_override('wait_soft_reboot_seconds', group='libvirt')
    assert 'rebooting it hard' in caplog.text
    assert _state(drv, instance) == power_state.RUNNING


def test_pause_and_suspend(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    drv.pause(instance)
    assert _state(drv, instance) == power_state.PAUSED
    drv.unpause(instance)
    assert _state(drv, instance) == power_state.RUNNING
    drv.suspend(ctxt, instance)
    assert _state(drv, instance) == power_state.SUSPENDED
    assert drv.host.get_guest(instance.uuid).has_saved_state()
    drv.resume(ctxt, instance)
    assert _state(drv, instance) == power_state.RUNNING


def test_console_output_reads_the_serial_log(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    # The test driver writes no console log: nothing, not an error.
    assert drv.get_console_output(ctxt, instance) == ''
    with open(os.path.join(drv.instance_dir(instance), 'console.log'), 'wb') as f:
        f.write(b'x' * 200 * 1024 + b'MARKER\n')
    output = drv.get_console_output(ctxt, instance)
    assert output.endswith('MARKER\n')
    assert len(output) == 100 * 1024


def test_available_resource_counts_running_guests(drv, ctxt, image):
    empty = drv.get_available_resource('host1')
    assert (empty['vcpus'], empty['memory_mb']) == (8, 16384)
    assert (empty['vcpus_used'], empty['memory_mb_used']) == (0, 0)
    assert empty['hypervisor_type'] == 'TEST'
    assert empty['hypervisor_hostname'] == 'host1'
    assert empty['local_gb'] > 0 and empty['disk_available_least'] <= empty['local_gb']
    assert json.loads(empty['cpu_info'])['topology']['cores'] == 8
    first = _spawn(drv, ctxt, image, vcpus=2, memory_mb=512, instance_id=1)
    _spawn(drv, ctxt, image, vcpus=1, memory_mb=256, instance_id=2)
    drv.power_off(first)
    used = drv.get_available_resource('host1')
    assert (used['vcpus_used'], used['memory_mb_used']) == (1, 256)


def test_simulated_hosts_are_separate(make_driver, ctxt, image):
    one, two = make_driver('h1', cpus=4), make_driver('h2', cpus=16)
    instance = _spawn(one, ctxt, image)
    assert two.list_instance_uuids() == []
    assert one.list_instance_uuids() == [instance.uuid]
    assert (one.get_available_nodes(), two.get_available_nodes()) == (['h1'], ['h2'])
    assert two.get_available_resource('h2')['vcpus'] == 16


def test_update_provider_tree_reports_inventory_with_ratios_and_reservations(drv):
    tree = ProviderTree()
    tree.new_root('host1', 'd3b0c5a8-8f3f-4a1e-9c55-0b8a3c1e2f40')
    tree.update_traits('host1', {'CUSTOM_GOLD', 'HW_CPU_X86_AVX'})
    CONF.set_override('cpu_allocation_ratio', 2.0)
    CONF.set_override('reserved_host_memory_mb', 1024)
    try:
        drv.update_provider_tree(tree, 'host1')
    finally:
        CONF.clear_override('cpu_allocation_ratio')
        CONF.clear_override('reserved_host_memory_mb')
    data = tree.data('host1')
    assert data.inventory['VCPU']['total'] == 8
    assert data.inventory['VCPU']['allocation_ratio'] == 2.0
    assert data.inventory['MEMORY_MB']['total'] == 16384
    assert data.inventory['MEMORY_MB']['reserved'] == 1024
    assert data.inventory['DISK_GB']['total'] > 0
    # The test driver's CPU has no features that are traits: the stale CPU trait
    # goes, the operator's custom trait stays.
    assert data.traits == {'CUSTOM_GOLD'}


def test_cpu_features_map_to_traits():
    assert libvirt_host.cpu_traits(['avx', 'sse4.2', 'pni', 'pclmuldq', 'vmx', 'lm',
                                    'nonpae']) == {
        'HW_CPU_X86_AVX', 'HW_CPU_X86_SSE42', 'HW_CPU_X86_SSE3', 'HW_CPU_X86_CLMUL',
        'HW_CPU_X86_VMX'}


def test_concurrent_builds_of_one_image_download_it_once(drv, ctxt, image_server, image):
    image_server.delay = 0.3
    instances = [make_instance(instance_id=i, image_ref=image['id']) for i in range(1, 6)]
    errors: list[BaseException] = []

    def build(instance):
        try:
            drv.spawn(ctxt, instance, image_meta(image), [], None, {})
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(i,)) for i in instances]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert image_server.file_gets == {image['id']: 1}
    assert sorted(drv.list_instance_uuids()) == sorted(i.uuid for i in instances)


def test_spawn_of_an_unknown_image_fails_without_a_domain(drv, ctxt, image_server):
    bogus = {'id': '6a1e0c1e-1b7e-4c55-9b1a-2f3e4d5c6b7a', 'disk_format': 'raw'}
    with pytest.raises(exception.ImageNotFound):
        _spawn(drv, ctxt, bogus)
    assert drv.list_instance_uuids() == []


def test_lifecycle_events_reach_the_listener(drv, ctxt, image):
    events: list[tuple[str, str]] = []
    drv.register_event_listener(lambda uuid, event: events.append((uuid, event)))
    instance = _spawn(drv, ctxt, image)
    guest = drv.host.get_guest(instance.uuid)
    guest.poweroff()  # as if the guest stopped on its own
    _wait(lambda: (instance.uuid, libvirt_host.EVENT_STOPPED) in events)
    guest.launch()
    drv.suspend(ctxt, instance)
    _wait(lambda: (instance.uuid, libvirt_host.EVENT_SUSPENDED) in events)
    assert events[0] == (instance.uuid, libvirt_host.EVENT_STARTED)


def test_broken_connection_is_opened_again(drv, ctxt, image):
    old = drv.host.get_connection()
    old.close()
    assert drv.host.get_connection() is not old
    # The test driver forgets everything on a new connection: a fresh simulated host.
    assert drv.list_instance_uuids() == []


def test_wrong_virt_type_for_the_hypervisor_is_refused(tmp_path):
    from novalite.virt.libvirt import driver as libvirt_driver
    CONF.set_override('virt_type', 'qemu', group='libvirt')
    try:
        drv = libvirt_driver.LibvirtDriver(connection_uri='test:///default',
                                           instances_path=str(tmp_path))
        with pytest.raises(exception.HypervisorUnavailable, match='does not match'):
            drv.init_host('h')
        drv.cleanup_host('h')
    finally:
        CONF.clear_override('virt_type', group='libvirt')


def test_unreachable_libvirt_is_hypervisor_unavailable(tmp_path, test_virt_type):
    from novalite.virt.libvirt import driver as libvirt_driver
    drv = libvirt_driver.LibvirtDriver(connection_uri='test:///nonexistent/node.xml',
                                       instances_path=str(tmp_path))
    with pytest.raises(exception.HypervisorUnavailable):
        drv.init_host('h')
    drv.cleanup_host('h')


def _wait(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'condition not met in %ss' % timeout
        time.sleep(0.01)


def test_guest_errors_other_than_not_running_pass_through(drv):
    with pytest.raises(libvirt.libvirtError):
        drv.host.define('<domain type="test"><name>broken</name></domain>')


def test_a_live_migrations_own_events_are_no_power_change():
    """The source's guest stopping because it moved, and the pause, start and resume of
    the migration itself, do not tell the compute the server changed state; the same
    events for other reasons do."""
    import libvirt

    from novalite.virt.libvirt import host
    ev = libvirt
    for event, migrated in ((ev.VIR_DOMAIN_EVENT_STOPPED, ev.VIR_DOMAIN_EVENT_STOPPED_MIGRATED),
                            (ev.VIR_DOMAIN_EVENT_SUSPENDED,
                             ev.VIR_DOMAIN_EVENT_SUSPENDED_MIGRATED),
                            (ev.VIR_DOMAIN_EVENT_RESUMED, ev.VIR_DOMAIN_EVENT_RESUMED_MIGRATED),
                            (ev.VIR_DOMAIN_EVENT_STARTED, ev.VIR_DOMAIN_EVENT_STARTED_MIGRATED)):
        assert host.lifecycle_event(event, migrated) is None
        assert host.lifecycle_event(event, 0) is not None
