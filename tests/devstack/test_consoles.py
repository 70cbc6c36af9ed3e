"""Issue 23's acceptance: the consoles of a REAL QEMU guest (TCG), through the console
proxy daemons of the stack, as a user opens them.

The stack runs novalite-novncproxy and novalite-serialproxy (``consoles=True``) and two
computes: one on the libvirt driver (``qemu:///system``, ``[serial_console] enabled``)
that runs this module's one guest, and one on the fake driver whose console tokens live
``TOKEN_TTL`` seconds only (``[consoleauth] token_ttl``), in an availability zone of its
own, for another project's server and an expired token. Checked:

- ``openstack console url show --novnc`` and ``--serial`` give the proxies' URLs;
- where the proxies connect to, from the driver's ``get_serial_console`` and
  ``get_vnc_console`` (run in the test's process against the domain the compute made;
  they only read its live XML): the serial TCP port, in the host's ``port_range``, is
  the one the domain binds, and the VNC port answers with QEMU's RFB banner;
- the serial proxy carries the guest's boot marker and what is typed (its tty echoes),
  and ``openstack console log show`` keeps both (libvirt logs beside the TCP port);
- Debian's noVNC in headless Chromium connects to the guest's screen and paints it;
- unknown, used, expired and deleted servers' tokens are refused by the proxy with its
  close reason; another project cannot get the guest's console (404), and its own token
  opens its own server only;
- ``GET /os-console-auth-tokens/{token}`` shows where a token connects to admins, 403 to
  members;
- after the delete nothing listens on the serial port and no domain is left.

Needs root, QEMU and libvirt, Debian's novnc and chromium (tools/setup.sh); skips without
them, fails under ``CI``.
"""
from __future__ import annotations

import os
import socket
import tempfile
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import libvirt
import pytest
import requests
import websocket

from novalite import exception, objects
from novalite.conf import CONF
from novalite.virt.libvirt import driver as libvirt_driver
from tests import chromium
from tests.devstack import clients, guest_image, libvirtd, qemu

HOST = 'qemuconacc1'
FAKE_HOST = 'conshort1'
ZONE = 'conshort'
# Serial ports of the QEMU host: away from the default range, so that other guests on
# this machine do not collide, and known, so that the guest's port is checked in it.
PORT_RANGE = '17450:17550'
PORTS = range(17450, 17550)
TOKEN_TTL = 8
INSTANCES_PATH = os.path.join(tempfile.gettempdir(),
                              'novalite-conacc-' + uuid.uuid4().hex[:8])
STACK = {
    'computes': (HOST, FAKE_HOST),
    'consoles': True,
    'host_conf': {
        'compute-' + HOST: {
            'DEFAULT': {'compute_driver': 'libvirt.LibvirtDriver',
                        'instances_path': INSTANCES_PATH},
            'libvirt': {'virt_type': 'qemu', 'connection_uri': libvirtd.URI},
            'serial_console': {'enabled': True, 'port_range': PORT_RANGE,
                               'proxyclient_address': '127.0.0.1'},
            'vnc': {'server_listen': '127.0.0.1',
                    'server_proxyclient_address': '127.0.0.1'}},
        'compute-' + FAKE_HOST: {
            'serial_console': {'enabled': True},
            'consoleauth': {'token_ttl': TOKEN_TTL}}},
}
BOOT_TIMEOUT = 180
TYPED = 'novalite-typed-%s' % uuid.uuid4().hex[:8]
REFUSED = (1008, "The token '***' is invalid or has expired")
OTHER_PROJECT = 'bob:other'
MEMBER = 'alice:admin'
_made: list[str] = []


@pytest.fixture(scope='module', autouse=True)
def libvirt_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[guest_image.GuestImage]:
    """libvirtd (started here if not running), noVNC, Chromium and the guest's files,
    before the stack."""
    with qemu.libvirt_host(INSTANCES_PATH, _made, tmp_path_factory,
                           needs=(lambda: chromium.need('chromium', chromium.NOVNC),)
                           ) as image:
        yield image


@pytest.fixture(scope='module')
def guest(libvirt_host, stack) -> Iterator[dict]:
    """The QEMU guest, booted with openstackclient; its serial console opened through
    the proxy as soon as the API gives one (QEMU drops what a guest writes while nobody
    is connected), read until the boot marker. Yields {'id', 'boot'}."""
    image = qemu.upload_guest(stack, libvirt_host, 'conacc')
    server_id = clients.osc(stack, 'server', 'create', '--image', image, '--flavor',
                            'm1.nano', '--nic', 'none', '--availability-zone',
                            'nova:' + HOST, 'console-acceptance-vm')['id']
    _made.append(server_id)
    try:
        url = stack.wait_for(lambda: _serial_url_once_running(stack, server_id),
                             BOOT_TIMEOUT, 'a serial console URL of %s' % server_id, 0.1)
        ws = _connect(url)
        try:
            boot = _read_until(ws, libvirt_host.marker.encode(), BOOT_TIMEOUT)
        finally:
            ws.close()
        yield {'id': server_id, 'boot': boot, 'marker': libvirt_host.marker}
    finally:
        stack.stop('compute-' + HOST)


@pytest.fixture
def drv() -> Iterator[libvirt_driver.LibvirtDriver]:
    """The libvirt driver as the QEMU compute has it configured, in this process: its
    console methods only read the live XML of the domain the compute made."""
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


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return False
    return True


def _remote_console(stack, server_id: str, protocol: str, token: str | None = None,
                    ) -> requests.Response:
    """POST /servers/{id}/remote-consoles (2.6) as admin, or as ``token``'s user."""
    console_type = {'vnc': 'novnc', 'serial': 'serial'}[protocol]
    headers = {'X-Auth-Token': token} if token else {}
    return stack.api('POST', '/servers/%s/remote-consoles' % server_id, microversion='2.6',
                     headers=headers, json={'remote_console': {
                         'protocol': protocol, 'type': console_type}})


def _serial_url_once_running(stack, server_id: str) -> str | None:
    """The serial console URL, or None while the server is still building (409)."""
    resp = _remote_console(stack, server_id, 'serial')
    if resp.status_code == 409:
        status = clients.server(stack, server_id)['status']
        assert status != 'ERROR', clients.server(stack, server_id)
        return None
    assert resp.status_code == 200, resp.text
    return resp.json()['remote_console']['url']


def _token_of(url: str) -> str:
    """The token in a console URL (serial ``?token=``, noVNC ``?path=%3Ftoken%3D``)."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    if 'path' in query:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(query['path'][0]).query)
    return query['token'][0]


def _connect(url: str) -> websocket.WebSocket:
    return websocket.create_connection(url, timeout=30)


def _read_until(ws: websocket.WebSocket, wanted: bytes, timeout: float) -> bytes:
    """What the console says until ``wanted`` appears (or the time runs out)."""
    got = b''
    deadline = time.monotonic() + timeout
    while wanted not in got and time.monotonic() < deadline:
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            opcode, chunk = ws.recv_data()
        except websocket.WebSocketTimeoutException:
            break
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
        got += chunk
    return got


def _close_of(url: str) -> tuple[int, str]:
    """The close frame the proxy answers ``url`` with: (code, reason)."""
    ws = _connect(url)
    try:
        while True:
            opcode, frame = ws.recv_data_frame(True)
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                return int.from_bytes(frame.data[:2], 'big'), frame.data[2:].decode()
    finally:
        ws.close()


def _shown(stack, token: str, user: str | None = None) -> requests.Response:
    headers = {'X-Auth-Token': user} if user else {}
    return stack.api('GET', '/os-console-auth-tokens/%s' % token, microversion='2.31',
                     headers=headers)


def test_openstack_console_url_show_gives_the_proxies_urls(stack, guest):
    novnc = clients.osc(stack, 'console', 'url', 'show', '--novnc', guest['id'])
    assert novnc['type'] == 'novnc', novnc
    assert novnc['url'].startswith(stack.novncproxy_url + '?path=%3Ftoken%3D'), novnc
    serial = clients.osc(stack, 'console', 'url', 'show', '--serial', guest['id'])
    assert serial['type'] == 'serial', serial
    assert serial['url'].startswith(stack.serialproxy_url + '?token='), serial
    assert _token_of(novnc['url']) != _token_of(serial['url'])


def test_the_drivers_consoles_are_the_domains_ports_and_vnc_answers_rfb(guest, drv):
    """Where the proxies connect to, as the driver reports it: the serial console's TCP
    port (in this host's range) is the one the domain binds, logging beside it; the VNC
    port answers with QEMU's RFB banner straight away."""
    instance = objects.Instance(uuid=guest['id'])
    xml = _running_domain_xml(guest['id'])
    assert xml is not None
    serial = drv.get_serial_console(None, instance)
    assert serial.host == '127.0.0.1' and serial.port in PORTS, serial
    domain = ET.fromstring(xml)
    source = domain.find("devices/serial[@type='tcp']/source")
    assert source is not None
    assert (source.get('mode'), source.get('service')) == ('bind', str(serial.port))
    log = domain.find("devices/serial[@type='tcp']/log")
    assert log is not None and log.get('file', '').endswith(guest['id'] + '/console.log')

    vnc = drv.get_vnc_console(None, instance)
    assert vnc.host == '127.0.0.1' and vnc.port >= 5900, vnc
    with socket.create_connection((vnc.host, vnc.port), timeout=30) as screen:
        banner = b''
        while not banner.endswith(b'\n'):
            chunk = screen.recv(64)
            if not chunk:
                break
            banner += chunk
    assert banner == b'RFB 003.008\n', banner


def test_the_serial_proxy_carries_the_boot_marker_and_what_is_typed(stack, guest):
    assert guest['marker'].encode() in guest['boot'], guest['boot'][-2000:]
    print('\nserial console through the proxy: %r' % [
        line for line in guest['boot'].splitlines() if guest['marker'].encode() in line][0])
    url = clients.osc(stack, 'console', 'url', 'show', '--serial', guest['id'])['url']
    ws = _connect(url)
    try:
        ws.send_binary(TYPED.encode() + b'\r')
        echoed = _read_until(ws, TYPED.encode(), 60)
    finally:
        ws.close()
    assert TYPED.encode() in echoed, echoed
    # libvirt logs the console beside its TCP port: the log keeps both.
    shown = clients.osc(stack, 'console', 'log', 'show', guest['id'], fmt_json=False)
    assert guest['marker'] in shown, shown[-2000:]
    assert TYPED in shown, shown[-2000:]


def test_novnc_in_headless_chromium_shows_the_guests_screen(stack, guest, tmp_path):
    url = clients.osc(stack, 'console', 'url', 'show', '--novnc', guest['id'])['url']
    with chromium.browser(str(tmp_path / 'profile'), str(tmp_path / 'chromium.log')) as page:
        page.call('Page.navigate', url=url)
        status, painted = chromium.wait_novnc_connected(page)
        size = page.evaluate("(() => { const c = document.querySelector('canvas');"
                             " return c ? [c.width, c.height] : null; })()")
        shot = page.screenshot()
    (tmp_path / 'novnc.png').write_bytes(shot)
    print('\nnoVNC: %r, canvas %s, %d painted pixels; screenshot %s'
          % (status, size, painted, tmp_path / 'novnc.png'))
    assert status.startswith('Connected'), status
    assert painted, 'the guest\'s screen is blank'
    assert chromium.png_colours(shot) > 1, 'the screenshot is blank'
    log = open(os.path.join(stack.log_dir, 'novncproxy.log')).read()
    assert _token_of(url) not in log


def test_unknown_and_used_tokens_are_refused(stack, guest):
    assert _close_of(stack.serialproxy_url + '?token=' + str(uuid.uuid4())) == REFUSED
    url = _remote_console(stack, guest['id'], 'serial').json()['remote_console']['url']
    # Used: it reached the guest (what is typed comes back), so the proxy redeemed it.
    typed = b'used-%s\r' % uuid.uuid4().hex[:8].encode()
    ws = _connect(url)
    try:
        ws.send_binary(typed)
        assert typed.strip() in _read_until(ws, typed.strip(), 60)
    finally:
        ws.close()
    assert _close_of(url) == REFUSED


def test_another_project_gets_no_console_and_its_token_opens_its_own_server(stack, guest):
    for protocol in ('vnc', 'serial'):
        resp = _remote_console(stack, guest['id'], protocol, token=OTHER_PROJECT)
        assert resp.status_code == 404, resp.text
    server_id = _other_project_server(stack)
    url = _remote_console(stack, server_id, 'serial', token=OTHER_PROJECT).json()[
        'remote_console']['url']
    ws = _connect(url)
    try:
        # The fake driver's console, not the QEMU guest's.
        assert _read_until(ws, b'\n', 30) == b'fake serial console\r\n'
    finally:
        ws.close()


def test_an_expired_token_is_refused(stack, guest):
    server_id = _other_project_server(stack)
    url = _remote_console(stack, server_id, 'serial', token=OTHER_PROJECT).json()[
        'remote_console']['url']
    # Valid while its TOKEN_TTL seconds run, then gone.
    assert _shown(stack, _token_of(url)).status_code == 200
    stack.wait_for(lambda: _shown(stack, _token_of(url)).status_code == 404, 60,
                   'the token to expire', 0.5)
    assert _close_of(url) == REFUSED


def test_console_auth_tokens_show_connection_info_to_admins_only(stack, guest):
    url = _remote_console(stack, guest['id'], 'vnc').json()['remote_console']['url']
    token = _token_of(url)
    resp = _shown(stack, token)
    assert resp.status_code == 200, resp.text
    console = resp.json()['console']
    assert console['instance_uuid'] == guest['id']
    assert console['host'] == '127.0.0.1' and console['port'] >= 5900, console
    assert 'internal_access_path' in console
    for user in (MEMBER, OTHER_PROJECT):
        assert _shown(stack, token, user).status_code == 403
    # Reading it does not use it up: the page still connects.
    assert _shown(stack, token).status_code == 200


def test_a_deleted_servers_token_is_refused_and_its_serial_port_freed(stack, guest, drv):
    instance = objects.Instance(uuid=guest['id'])
    serial = drv.get_serial_console(None, instance)
    url = _remote_console(stack, guest['id'], 'serial').json()['remote_console']['url']
    assert _shown(stack, _token_of(url)).status_code == 200
    clients.osc(stack, 'server', 'delete', '--wait', guest['id'], fmt_json=False,
                timeout=BOOT_TIMEOUT)
    assert _shown(stack, _token_of(url)).status_code == 404
    assert _close_of(url) == REFUSED
    assert clients.allocations(stack, guest['id']) == {}
    assert _running_domain_xml(guest['id']) is None
    # (The VNC port is libvirt's to give to the next guest at once; the serial one is
    # in this host's own range.)
    assert not _listening(serial.host, serial.port)
    with pytest.raises(exception.InstanceNotFound):
        drv.get_serial_console(None, instance)


_other: dict[str, str] = {}


def _other_project_server(stack) -> str:
    """A server of another project, on the fake compute (its zone), made once."""
    if 'id' not in _other:
        _zone(stack)
        resp = stack.api('POST', '/servers', microversion='2.37',
                         headers={'X-Auth-Token': OTHER_PROJECT}, json={'server': {
                             'name': 'other-project-vm', 'imageRef': stack.image_id,
                             'flavorRef': clients.flavor_id(stack, 'm1.nano'),
                             'networks': 'none', 'availability_zone': ZONE}})
        assert resp.status_code == 202, resp.text
        _other['id'] = resp.json()['server']['id']
        clients.wait_status(stack, _other['id'], 'ACTIVE')
    return _other['id']


def _zone(stack) -> None:
    resp = stack.api('POST', '/os-aggregates', json={'aggregate': {
        'name': ZONE, 'availability_zone': ZONE}})
    assert resp.status_code == 200, resp.text
    resp = stack.api('POST', '/os-aggregates/%s/action' % resp.json()['aggregate']['id'],
                     json={'add_host': {'host': FAKE_HOST}})
    assert resp.status_code == 200, resp.text
