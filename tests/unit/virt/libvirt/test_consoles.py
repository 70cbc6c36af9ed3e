"""The libvirt driver's consoles on libvirt's test driver: the VNC server and the serial
port on TCP in the domain XML, the ports handed out and given back, and what
get_vnc_console / get_serial_console answer."""
from __future__ import annotations

import socket
import xml.etree.ElementTree as ET

import pytest

from novalite import exception
from novalite.conf import CONF
from novalite.virt.libvirt import serial
from tests.unit.virt.conftest import image_meta, make_instance

DATA = b'\0' * 4096
SPAN = 40


@pytest.fixture(autouse=True)
def fresh_ports(monkeypatch):
    """Each test starts with no port held (as a freshly started compute)."""
    monkeypatch.setattr(serial, '_allocated', set())


@pytest.fixture
def listener():
    """A socket listening on a free port of 127.0.0.1 (something else's server)."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def _override(group: str, **values) -> None:
    for name, value in values.items():
        CONF.set_override(name, value, group=group)


@pytest.fixture
def serial_on(listener):
    """Serial consoles on 127.0.0.1, the range starting at a port something listens on.
    (The ports after it may be some other program's too: tests do not expect the port
    right after it.)"""
    _override('serial_console', enabled=True, proxyclient_address='127.0.0.1',
              port_range='%d:%d' % (listener, listener + SPAN))
    yield listener
    for name in ('enabled', 'proxyclient_address', 'port_range'):
        CONF.clear_override(name, group='serial_console')


@pytest.fixture
def vnc_off():
    CONF.set_override('enabled', False, group='vnc')
    yield
    CONF.clear_override('enabled', group='vnc')


@pytest.fixture
def drv(make_driver):
    return make_driver('host1')


@pytest.fixture
def image(image_server):
    return image_server.add_image(DATA, disk_format='raw')


def _spawn(drv, ctxt, image, instance_id=1):
    instance = make_instance(instance_id=instance_id, image_ref=image['id'])
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    return instance


def _devices(drv, instance, live=True) -> ET.Element:
    guest = drv.host.get_guest(instance.uuid)
    return ET.fromstring(guest.xml() if live else guest.persistent_xml()).find('devices')


def test_vnc_graphics_and_video_and_a_file_serial_by_default(drv, ctxt, image):
    instance = _spawn(drv, ctxt, image)
    devices = _devices(drv, instance, live=False)
    graphics = devices.findall('graphics')
    assert [(g.get('type'), g.get('autoport'), g.get('listen')) for g in graphics] == [
        ('vnc', 'yes', CONF.vnc.server_listen)]
    assert [v.find('model').get('type') for v in devices.findall('video')] == ['virtio']
    serials = devices.findall('serial')
    assert [s.get('type') for s in serials] == ['file']
    assert serials[0].find('source').get('path').endswith('/console.log')


def test_no_graphics_when_vnc_is_off(drv, ctxt, image, vnc_off):
    instance = _spawn(drv, ctxt, image)
    devices = _devices(drv, instance, live=False)
    assert devices.findall('graphics') == []
    assert devices.findall('video') == []
    with pytest.raises(exception.ConsoleTypeUnavailable):
        drv.get_vnc_console(ctxt, instance)


def test_serial_on_tcp_with_the_log_kept_skipping_a_port_in_use(drv, ctxt, image, serial_on):
    busy = serial_on
    instance = _spawn(drv, ctxt, image)
    serials = _devices(drv, instance, live=False).findall('serial')
    assert [s.get('type') for s in serials] == ['tcp']
    source = serials[0].find('source')
    assert (source.get('mode'), source.get('host')) == ('bind', '127.0.0.1')
    port = int(source.get('service'))
    # The first port of the range is someone else's: a later one is the guest's.
    assert busy < port < busy + SPAN
    assert serials[0].find('protocol').get('type') == 'raw'
    log = serials[0].find('log')
    assert log.get('file') == drv.instance_dir(instance) + '/console.log'
    assert log.get('append') == 'on'
    assert serials[0].find('target').get('port') == '0'

    console = drv.get_serial_console(ctxt, instance)
    assert (console.host, console.port) == ('127.0.0.1', port)
    assert serial.held_ports() == {('127.0.0.1', port)}


def test_each_guest_its_own_port_and_destroy_gives_it_back(drv, ctxt, image, serial_on):
    first = _spawn(drv, ctxt, image, 1)
    second = _spawn(drv, ctxt, image, 2)
    one, two = (drv.get_serial_console(ctxt, i).port for i in (first, second))
    assert one != two
    assert serial.held_ports() == {('127.0.0.1', one), ('127.0.0.1', two)}

    drv.destroy(ctxt, first)
    assert serial.held_ports() == {('127.0.0.1', two)}
    third = _spawn(drv, ctxt, image, 3)
    assert drv.get_serial_console(ctxt, third).port != two
    assert len(serial.held_ports()) == 2


def test_an_exhausted_range_fails_the_spawn_and_holds_nothing_more(drv, ctxt, image,
                                                                   serial_on):
    kept = _spawn(drv, ctxt, image, 1)
    held = serial.held_ports()
    # Every other port of the range held by guests of this host.
    serial.reserve_ports([('127.0.0.1', p) for p in range(serial_on + 1, serial_on + SPAN)])
    everything = serial.held_ports()
    with pytest.raises(exception.ConsolePortRangeExhausted) as info:
        _spawn(drv, ctxt, image, 2)
    assert '%d-%d' % (serial_on, serial_on + SPAN) in str(info.value)
    assert drv.list_instance_uuids() == [kept.uuid]
    assert serial.held_ports() == everything
    assert held <= everything


def test_a_restarted_compute_keeps_the_ports_of_defined_guests(drv, ctxt, image, serial_on):
    instance = _spawn(drv, ctxt, image)
    port = drv.get_serial_console(ctxt, instance).port
    drv.power_off(instance)
    serial._allocated.clear()  # what a new process starts with

    drv.init_host('host1')
    assert serial.held_ports() == {('127.0.0.1', port)}
    other = _spawn(drv, ctxt, image, 2)
    assert drv.get_serial_console(ctxt, other).port != port


def test_serial_console_unavailable_when_off_and_not_available_without_tcp(drv, ctxt,
                                                                           image):
    instance = _spawn(drv, ctxt, image)
    with pytest.raises(exception.ConsoleTypeUnavailable):
        drv.get_serial_console(ctxt, instance)
    CONF.set_override('enabled', True, group='serial_console')
    try:
        # Defined while serial consoles were off: its serial port is a file.
        with pytest.raises(exception.ConsoleNotAvailable):
            drv.get_serial_console(ctxt, instance)
    finally:
        CONF.clear_override('enabled', group='serial_console')


def test_vnc_console_is_the_live_graphics_port(drv, ctxt, image):
    CONF.set_override('server_proxyclient_address', '192.0.2.10', group='vnc')
    try:
        instance = _spawn(drv, ctxt, image)
        # The test driver never picks a port (-1): no console to open.
        with pytest.raises(exception.ConsoleTypeUnavailable):
            drv.get_vnc_console(ctxt, instance)
        # A port QEMU would have chosen, as the live XML then shows it.
        guest = drv.host.get_guest(instance.uuid)
        domain = ET.fromstring(guest.persistent_xml())
        graphics = domain.find('devices/graphics')
        graphics.set('autoport', 'no')
        graphics.set('port', '5907')
        guest.poweroff()
        drv.host.define(ET.tostring(domain, encoding='unicode')).launch()
        console = drv.get_vnc_console(ctxt, instance)
        assert (console.host, console.port) == ('192.0.2.10', 5907)
    finally:
        CONF.clear_override('server_proxyclient_address', group='vnc')


def test_consoles_of_a_missing_guest_are_instance_not_found(drv, ctxt, serial_on):
    instance = make_instance()
    with pytest.raises(exception.InstanceNotFound):
        drv.get_vnc_console(ctxt, instance)
    with pytest.raises(exception.InstanceNotFound):
        drv.get_serial_console(ctxt, instance)


def test_a_resized_domain_keeps_a_held_port_and_gets_a_new_one_for_a_foreign(serial_on):
    xml = ("<domain><devices><serial type='tcp'><source mode='bind' host='10.0.0.9' "
           "service='12345'/></serial><console type='tcp'><source mode='bind' "
           "host='10.0.0.9' service='12345'/></console></devices></domain>")
    moved, acquired = serial.rebind_ports(xml)
    [(host, port)] = acquired
    assert host == '127.0.0.1' and serial_on < port < serial_on + SPAN
    assert serial.tcp_ports(moved) == acquired
    assert serial.held_ports() == set(acquired)
    console = ET.fromstring(moved).find('devices/console/source')
    assert (console.get('host'), console.get('service')) == ('127.0.0.1', str(port))
    # Back on a host where it already holds its port: nothing changes.
    assert serial.rebind_ports(moved) == (moved, [])


def test_a_rescued_guest_deleted_gives_its_port_back(drv, ctxt, image, serial_on):
    instance = _spawn(drv, ctxt, image)
    port = drv.get_serial_console(ctxt, instance).port
    drv.rescue(ctxt, instance, None, image_meta(image), None)
    # The rescue domain replaced the definition; the kept one still holds the port.
    assert serial.held_ports() == {('127.0.0.1', port)}
    drv.destroy(ctxt, instance)
    assert serial.held_ports() == set()
