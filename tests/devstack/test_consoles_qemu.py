"""The consoles of a REAL QEMU guest (TCG) as the libvirt driver sets them up.

One compute runs the libvirt driver on ``qemu:///system`` with ``[serial_console]
enabled`` (VNC is on by default). One guest (``guest_image``: Debian's cloud kernel and a
busybox ``/init`` printing a marker on its serial console) is booted through
openstackclient, and then, as the console proxies will reach it:

- the VNC port ``get_vnc_console`` reports answers with QEMU's RFB banner;
- the TCP port ``get_serial_console`` reports carries the guest's serial output (its
  boot marker), and what is typed there reaches the guest (its tty echoes it back);
- ``openstack console log show`` still has the whole log (libvirt keeps it beside the
  TCP port);
- after the delete nothing listens on the serial port and no domain is left.

The driver's two methods run here, in the test's process, against the domain the
compute made (they only read its live XML). Needs root and the QEMU packages
(tools/setup.sh); skips without them, fails under ``CI``.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET

import libvirt
import pytest

from novalite import exception, objects
from novalite.conf import CONF
from novalite.virt.libvirt import driver as libvirt_driver
from tests.devstack import clients, guest_image, libvirtd

HOST = 'qemucon1'
# Serial console ports of this module's compute host: away from the default range, so
# that another stack's guests (or the unit tests) on this machine do not collide.
PORT_RANGE = '17300:17400'
# As test_qemu.py: QEMU's unprivileged user must pass through the instances' directories.
INSTANCES_PATH = os.path.join(tempfile.gettempdir(),
                              'novalite-qemucon-' + uuid.uuid4().hex[:8])
STACK = {
    'computes': (HOST,),
    'host_conf': {'compute-' + HOST: {
        'DEFAULT': {'compute_driver': 'libvirt.LibvirtDriver',
                    'instances_path': INSTANCES_PATH},
        'libvirt': {'virt_type': 'qemu', 'connection_uri': libvirtd.URI},
        'serial_console': {'enabled': True, 'port_range': PORT_RANGE,
                           'proxyclient_address': '127.0.0.1'},
        'vnc': {'server_listen': '127.0.0.1',
                'server_proxyclient_address': '127.0.0.1'}}},
}
BOOT_TIMEOUT = 120
# What is typed on the serial console; the guest's tty echoes it.
TYPED = 'novalite-typed-%s' % uuid.uuid4().hex[:8]
_made: list[str] = []


@pytest.fixture(scope='module', autouse=True)
def libvirt_host(tmp_path_factory):
    """libvirtd (started here if not running) and the guest's files, before the stack."""
    libvirtd.check_packages()
    try:
        image = guest_image.build()
    except (RuntimeError, OSError) as exc:
        libvirtd.unavailable('cannot build the guest image: %s' % exc)
    os.makedirs(INSTANCES_PATH)
    os.chmod(INSTANCES_PATH, 0o711)
    daemons = None
    if not libvirtd.reachable():
        daemons = libvirtd.Daemons(str(tmp_path_factory.mktemp('libvirtd')))
        daemons.start()
    yield image
    _remove_domains(_made)
    shutil.rmtree(INSTANCES_PATH, ignore_errors=True)
    if daemons is not None:
        left = daemons.stop()
        assert not left, 'libvirt daemons did not stop: %s' % left


@pytest.fixture(scope='module')
def qemu_stack(stack):
    """The stack; its compute stops before the libvirtd it talks to does."""
    yield stack
    stack.stop('compute-' + HOST)


@pytest.fixture
def drv():
    """The libvirt driver as the compute has it configured, in this process."""
    overrides = [('enabled', True, 'serial_console'),
                 ('server_proxyclient_address', '127.0.0.1', 'vnc'),
                 ('virt_type', 'qemu', 'libvirt')]
    for name, value, group in overrides:
        CONF.set_override(name, value, group=group)
    objects.register_all()
    made = libvirt_driver.LibvirtDriver(connection_uri=libvirtd.URI,
                                        instances_path=INSTANCES_PATH)
    # Its connection listens for domain events: libvirt's event loop must run first.
    made.host.initialize()
    yield made
    made.host.close()
    for name, _value, group in overrides:
        CONF.clear_override(name, group=group)


def _remove_domains(uuids: list[str]) -> None:
    conn = libvirt.open(libvirtd.URI)
    try:
        for domain in conn.listAllDomains(0):
            if domain.UUIDString() in uuids:
                if domain.isActive():
                    domain.destroy()
                domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
    finally:
        conn.close()


def _running_domain_xml(server_id: str) -> str | None:
    conn = libvirt.open(libvirtd.URI)
    try:
        try:
            domain = conn.lookupByUUIDString(server_id)
        except libvirt.libvirtError:
            return None
        return domain.XMLDesc(0) if domain.isActive() else None
    finally:
        conn.close()


def _upload(stack, image: guest_image.GuestImage) -> str:
    kernel = clients.osc(stack, 'image', 'create', '--disk-format', 'aki',
                         '--container-format', 'aki', '--file', image.kernel,
                         'qemucon-kernel')
    ramdisk = clients.osc(stack, 'image', 'create', '--disk-format', 'ari',
                          '--container-format', 'ari', '--file', image.ramdisk,
                          'qemucon-ramdisk')
    clients.osc(stack, 'image', 'create', '--disk-format', 'raw',
                '--container-format', 'bare', '--file', image.root,
                '--property', 'kernel_id=%s' % kernel['id'],
                '--property', 'ramdisk_id=%s' % ramdisk['id'],
                '--property', 'os_command_line=%s' % image.cmdline, 'qemucon-guest')
    return 'qemucon-guest'


def _connect(host: str, port: int, timeout: float = 30) -> socket.socket:
    """A connection to ``host``:``port``, tried until QEMU listens there."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _read_until(sock: socket.socket, wanted: bytes, timeout: float) -> bytes:
    """What ``sock`` says until ``wanted`` appears in it (or the time runs out)."""
    got = b''
    deadline = time.monotonic() + timeout
    while wanted not in got and time.monotonic() < deadline:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            break
        if not chunk:
            break
        got += chunk
    return got


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return False
    return True


def test_vnc_and_serial_consoles_of_a_real_guest(libvirt_host, qemu_stack, drv):
    stack = qemu_stack
    marker = libvirt_host.marker.encode()
    image_name = _upload(stack, libvirt_host)
    server_id = clients.osc(stack, 'server', 'create', '--image', image_name, '--flavor',
                            'm1.nano', '--nic', 'none', 'qemu-console-vm')['id']
    _made.append(server_id)
    instance = objects.Instance(uuid=server_id)

    # On the serial port as soon as the guest runs: QEMU drops what the guest writes
    # while nobody is connected (the log file keeps it), so connect before it boots.
    xml = stack.wait_for(lambda: _running_domain_xml(server_id), BOOT_TIMEOUT,
                         'the domain of %s running' % server_id, interval=0.2)
    serial = drv.get_serial_console(None, instance)
    assert serial.host == '127.0.0.1'
    assert 17300 <= serial.port < 17400, serial
    domain = ET.fromstring(xml)
    source = domain.find("devices/serial[@type='tcp']/source")
    assert (source.get('mode'), source.get('service')) == ('bind', str(serial.port))
    log = domain.find("devices/serial[@type='tcp']/log")
    assert log is not None and log.get('file').endswith(server_id + '/console.log')
    console = _connect(serial.host, serial.port)
    try:
        seen = _read_until(console, marker, BOOT_TIMEOUT)
        assert marker in seen, seen[-2000:]
        print('\nserial console: %r' % [line for line in seen.splitlines()
                                        if marker in line][0])
        # No shell reads it, but the guest's tty echoes what it receives.
        console.sendall(TYPED.encode() + b'\r')
        echoed = _read_until(console, TYPED.encode(), 30)
        assert TYPED.encode() in echoed, echoed
    finally:
        console.close()

    vnc = drv.get_vnc_console(None, instance)
    assert vnc.host == '127.0.0.1' and vnc.port >= 5900, vnc
    with _connect(vnc.host, vnc.port) as screen:
        banner = _read_until(screen, b'\n', 30)
    assert banner == b'RFB 003.008\n', banner

    _wait_active(stack, server_id)
    shown = clients.osc(stack, 'console', 'log', 'show', server_id, fmt_json=False)
    assert libvirt_host.marker in shown, shown[-2000:]
    assert TYPED in shown, shown[-2000:]

    clients.osc(stack, 'server', 'delete', '--wait', server_id, fmt_json=False,
                timeout=BOOT_TIMEOUT)
    assert _running_domain_xml(server_id) is None
    # (The VNC port is libvirt's to give to the next guest at once; the serial one is
    # in this host's own range.)
    assert not _listening(serial.host, serial.port)
    with pytest.raises(exception.InstanceNotFound):
        drv.get_serial_console(None, instance)
    assert clients.allocations(stack, server_id) == {}


def _wait_active(stack, server_id: str) -> None:
    def active() -> bool:
        shown = clients.osc(stack, 'server', 'show', server_id)
        assert shown['status'] != 'ERROR', shown
        return shown['status'] == 'ACTIVE'
    stack.wait_for(active, BOOT_TIMEOUT, 'server %s ACTIVE' % server_id, interval=1)
