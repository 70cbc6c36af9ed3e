"""Attaching and detaching a VIF: the fake driver's NIC list, and the libvirt driver's
plug, ``<interface>`` XML and flags. libvirt's test driver cannot attach devices, so
the domain calls are recorded (the NIC's XML is the one spawn writes)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import libvirt
import pytest

from novalite import exception, objects
from novalite.virt import fake
from novalite.virt.libvirt import driver as libvirt_driver
from novalite.virt.libvirt import guest as libvirt_guest
from tests.unit.virt.conftest import make_instance, write_node
from tests.unit.virt.test_libvirt_vif import RecordingPlugger, make_vif

SECOND = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'


# -- fake driver ----------------------------------------------------------------------

def test_the_fake_guest_gains_and_loses_nics():
    objects.register_all()
    drv = fake.FakeDriver()
    drv.init_host('h1')
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[make_vif()])
    drv.attach_interface(None, instance, None, make_vif(port_id=SECOND))
    assert drv.interfaces(instance) == [make_vif()['id'], SECOND]
    with pytest.raises(exception.InterfaceAttachFailed):
        drv.attach_interface(None, instance, None, make_vif(port_id=SECOND))
    drv.detach_interface(None, instance, make_vif())
    drv.detach_interface(None, instance, make_vif())   # gone already: no error
    assert drv.interfaces(instance) == [SECOND]
    drv.destroy(None, instance)
    with pytest.raises(exception.InstanceNotFound):
        drv.attach_interface(None, instance, None, make_vif())


# -- libvirt driver -------------------------------------------------------------------

class DeviceCalls:
    """Records Guest.attach_device/detach_device instead of calling libvirt."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ET.Element, bool, bool]] = []
        self.error: libvirt.libvirtError | None = None

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def record(name: str):
            def call(guest, xml: str, persistent: bool = True, live: bool = False) -> None:
                self.calls.append((name, ET.fromstring(xml), persistent, live))
                if self.error is not None:
                    raise self.error
            return call
        monkeypatch.setattr(libvirt_guest.Guest, 'attach_device', record('attach'))
        monkeypatch.setattr(libvirt_guest.Guest, 'detach_device', record('detach'))


@pytest.fixture
def plugger() -> RecordingPlugger:
    return RecordingPlugger()


@pytest.fixture
def devices(monkeypatch) -> DeviceCalls:
    calls = DeviceCalls()
    calls.install(monkeypatch)
    return calls


@pytest.fixture
def drv(tmp_path, test_virt_type, plugger):
    driver = libvirt_driver.LibvirtDriver(
        connection_uri=write_node(tmp_path / 'host1.xml'),
        instances_path=str(tmp_path / 'host1'), vif_plugger=plugger)
    driver.init_host('host1')
    yield driver
    driver.cleanup_host('host1')


def test_attach_plugs_then_adds_the_nic_live_and_to_the_definition(drv, plugger, devices):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[])
    vif = make_vif(port_id=SECOND, mac='fa:16:3e:00:00:02')
    drv.attach_interface(None, instance, None, vif)
    assert plugger.calls == [('plug', SECOND)]
    ((name, nic, persistent, live),) = devices.calls
    assert (name, persistent, live) == ('attach', True, True)
    assert nic.tag == 'interface' and nic.get('type') == 'ethernet'
    assert nic.find('mac').get('address') == 'fa:16:3e:00:00:02'
    assert (nic.find('target').get('dev'), nic.find('target').get('managed')) == \
        ('tap0a1b2c3d-4e', 'no')
    assert nic.find('model').get('type') == 'virtio'
    assert nic.find('mtu').get('size') == '1442'


def test_attach_to_a_stopped_guest_changes_only_the_definition(drv, plugger, devices):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[])
    drv.power_off(instance)
    drv.attach_interface(None, instance, None, make_vif())
    assert [(c[0], c[2], c[3]) for c in devices.calls] == [('attach', True, False)]


def test_a_failed_attach_unplugs_again(drv, plugger, devices):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[])
    devices.error = libvirt.libvirtError('unable to execute QEMU command device_add')
    with pytest.raises(exception.InterfaceAttachFailed):
        drv.attach_interface(None, instance, None, make_vif())
    assert plugger.calls == [('plug', make_vif()['id']), ('unplug', make_vif()['id'])]


def test_a_port_whose_binding_failed_is_not_attached(drv, plugger, devices):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[])
    with pytest.raises(exception.VirtualInterfaceCreateException):
        drv.attach_interface(None, instance, None, make_vif(vif_type='binding_failed'))
    assert plugger.calls == [] and devices.calls == []


def test_detach_removes_the_nic_by_mac_then_unplugs(drv, plugger, devices):
    instance = make_instance()
    vif = make_vif()
    drv.spawn(None, instance, None, [], None, {}, network_info=[vif])
    drv.detach_interface(None, instance, vif)
    ((name, nic, persistent, live),) = devices.calls
    assert (name, persistent, live) == ('detach', True, True)
    assert nic.find('mac').get('address') == vif['address']
    assert plugger.calls[-1] == ('unplug', vif['id'])


def test_detach_of_a_nic_the_guest_lacks_only_unplugs(drv, plugger, devices):
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=[])
    drv.detach_interface(None, instance, make_vif())
    assert devices.calls == []
    assert plugger.calls == [('unplug', make_vif()['id'])]


def test_a_failed_detach_keeps_the_vif_plugged(drv, plugger, devices):
    instance = make_instance()
    vif = make_vif()
    drv.spawn(None, instance, None, [], None, {}, network_info=[vif])
    devices.error = libvirt.libvirtError('device not released by the guest')
    with pytest.raises(exception.InterfaceDetachFailed):
        drv.detach_interface(None, instance, vif)
    assert ('unplug', vif['id']) not in plugger.calls


def test_the_libvirt_guest_passes_the_flags():
    class Domain:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str, int]] = []

        def attachDeviceFlags(self, xml: str, flags: int) -> None:
            self.calls.append(('attach', xml, flags))

        def detachDeviceFlags(self, xml: str, flags: int) -> None:
            self.calls.append(('detach', xml, flags))

    domain = Domain()
    guest = libvirt_guest.Guest(domain)
    guest.attach_device('<interface/>', persistent=True, live=True)
    guest.detach_device('<interface/>', persistent=True, live=False)
    assert domain.calls == [
        ('attach', '<interface/>',
         libvirt.VIR_DOMAIN_AFFECT_CONFIG | libvirt.VIR_DOMAIN_AFFECT_LIVE),
        ('detach', '<interface/>', libvirt.VIR_DOMAIN_AFFECT_CONFIG)]
