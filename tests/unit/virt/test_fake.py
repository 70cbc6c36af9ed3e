"""The fake driver's power operations and console output."""
from __future__ import annotations

import pytest

from novalite import exception, objects
from novalite.compute import power_state
from novalite.virt import fake


@pytest.fixture
def guest():
    objects.register_all()
    drv = fake.FakeDriver()
    drv.init_host('fake-host')
    instance = objects.Instance(uuid='8b4c3d0e-6f0a-4d55-9a43-2f0f5d3c1e11',
                                flavor=objects.Flavor(vcpus=1, memory_mb=64, root_gb=1,
                                                      ephemeral_gb=0))
    drv.spawn(None, instance, None, [], None, {})
    return drv, instance


def test_power_off_on_and_reboot_change_the_guest_state(guest):
    drv, instance = guest
    drv.power_off(instance, timeout=5)
    assert drv.get_info(instance).state == power_state.SHUTDOWN
    drv.power_on(None, instance)
    assert drv.get_info(instance).state == power_state.RUNNING
    drv.power_off(instance)
    drv.reboot(None, instance, reboot_type='HARD')
    assert drv.get_info(instance).state == power_state.RUNNING


def test_console_output_names_the_instance(guest):
    drv, instance = guest
    assert instance.uuid in drv.get_console_output(None, instance)


def test_power_operations_of_an_unknown_guest_raise_not_found(guest):
    drv, instance = guest
    drv.destroy(None, instance)
    for call in (lambda: drv.power_off(instance), lambda: drv.power_on(None, instance),
                 lambda: drv.reboot(None, instance),
                 lambda: drv.get_console_output(None, instance)):
        with pytest.raises(exception.InstanceNotFound):
            call()
