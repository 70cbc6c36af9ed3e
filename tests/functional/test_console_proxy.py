"""The console proxy as it runs: websockify serving novalite's handler, a websocket client
(websocket-client) on one side, a TCP console test double on the other.

The token store and the compute host are test doubles too (``TokenStoreDouble``,
``ComputeAPIDouble``): the proxy's own code between them is real. The proxy runs in a
process forked from the test (websockify sets signal handlers, which only a main thread
may), and forks one more per connection, so the doubles keep their state in files.
"""
from __future__ import annotations

import base64
import datetime
import json
import logging
import multiprocessing
import os
import pathlib
import shutil
import socket
import socketserver
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import oslo_messaging
import pytest
import websocket

from novalite import exception, objects
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from novalite.console import auth, baseproxy, websocketproxy
from novalite.context import get_admin_context
from novalite.virt import fake
from tests.chromium import DevTools
from tests.functional.stack import Stack

GREETING = b'console-double ready\r\n'
SERVER = '6f1e1e0a-5d0e-4a52-9f0b-3c1a2b7d9e01'
DELETED_SERVER = '0d5c9b8e-2f4a-4c7e-8b1d-6a3e5f7c9d02'


class ConsoleDouble(socketserver.ThreadingTCPServer):
    """A guest's console port: greets, then answers each chunk with ``echo:`` + chunk."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(('127.0.0.1', 0), _ConsoleHandler)
        self.port = self.server_address[1]


class _ConsoleHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(GREETING)
        while data := self.request.recv(4096):
            self.request.sendall(b'echo:' + data)


class TokenStoreDouble:
    """Console tokens in a JSON file (shared by the proxy's processes): ``redeem`` as
    ``novalite.console.auth.redeem`` answers, one-time, with expiry."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        self.used = path.with_suffix('.used')
        self.used.mkdir()
        self.path.write_text('{}')

    def add(self, token: str, port: int, ttl: float = 600, console_type: str = 'novnc',
            instance_uuid: str = SERVER) -> None:
        tokens = json.loads(self.path.read_text())
        expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=ttl)
        tokens[token] = {'port': port, 'expires': expires.isoformat(),
                         'console_type': console_type, 'instance_uuid': instance_uuid}
        self.path.write_text(json.dumps(tokens))

    def redeem(self, context: object, token: str) -> auth.ConnectInfo:
        entry = json.loads(self.path.read_text()).get(token)
        if entry is None:
            raise exception.InvalidToken(token='***')
        expires = datetime.datetime.fromisoformat(entry['expires'])
        if expires <= datetime.datetime.now(datetime.UTC):
            raise exception.InvalidToken(token='***')
        try:
            os.close(os.open(self.used / token, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            raise exception.InvalidToken(token='***') from None
        return auth.ConnectInfo(instance_uuid=entry['instance_uuid'],
                                console_type=entry['console_type'], host='127.0.0.1',
                                port=entry['port'], internal_access_path=None,
                                expires=expires, context=get_admin_context())


class ComputeAPIDouble:
    """The compute host's answer to validate_console_port: no port in ``moved_ports``
    (a file, one port a line) is the guest's any more; ``host-down`` there: no answer."""

    moved_ports: pathlib.Path

    def validate_console_port(self, context: object, instance: object, port: int,
                              console_type: str) -> bool:
        moved = self.moved_ports.read_text().split()
        if 'host-down' in moved:
            raise oslo_messaging.MessagingTimeout('no reply from compute1')
        return str(port) not in moved


def _instance_double(context: object, uuid: str) -> objects.Instance:
    if uuid == DELETED_SERVER:
        raise exception.InstanceNotFound(instance_id=uuid)
    return objects.Instance(uuid=uuid, host='compute1')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _serve(binary: str, port: int, web: str | None, log_file: str) -> None:
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter('%(levelname)s %(name)s %(message)s'))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    os._exit(baseproxy.serve(binary, '127.0.0.1', port, web))


class Proxy:
    def __init__(self, port: int, tokens: TokenStoreDouble, console: ConsoleDouble,
                 log: pathlib.Path, moved: pathlib.Path) -> None:
        self.port = port
        self.tokens = tokens
        self.console = console
        self.log = log
        self.moved = moved

    def url(self, query: str = '') -> str:
        return 'ws://127.0.0.1:%d/%s' % (self.port, query)

    def token(self, name: str, **kwargs: object) -> str:
        kwargs.setdefault('port', self.console.port)
        self.tokens.add(name, **kwargs)  # type: ignore[arg-type]
        return name


def _wait_listening(port: int, proc: multiprocessing.process.BaseProcess) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.is_alive(), 'the proxy exited'
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError('the proxy does not listen')


@pytest.fixture
def proxy(request: pytest.FixtureRequest, tmp_path: pathlib.Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Proxy]:
    """The noVNC proxy serving a web directory, in a process of its own (as the daemon
    runs it) or, with ``'server': 'in-process'`` in the indirect parameter, as
    ``InProcessProxy`` threads of this process; options for it as ``{group: {option:
    value}}`` in the parameter."""
    param = dict(getattr(request, 'param', {}))
    server = param.pop('server', 'forking')
    web_dir = param.pop('web', None)
    for group, options in param.items():
        for name, value in options.items():
            CONF.set_override(name, value, group=group)
            request.addfinalizer(lambda n=name, g=group: CONF.clear_override(n, group=g))
    web = tmp_path / 'web'
    web.mkdir()
    (web / 'vnc_auto.html').write_text('<html>noVNC double</html>')
    (web / 'app').mkdir()
    web = pathlib.Path(web_dir) if web_dir else web
    tokens = TokenStoreDouble(tmp_path / 'tokens.json')
    moved = tmp_path / 'moved-ports'
    moved.write_text('')
    ComputeAPIDouble.moved_ports = moved
    monkeypatch.setattr(auth, 'redeem', tokens.redeem)
    monkeypatch.setattr(compute_rpcapi, 'ComputeAPI', ComputeAPIDouble)
    monkeypatch.setattr(objects.Instance, 'get_by_uuid', staticmethod(_instance_double))
    console = ConsoleDouble()
    threading.Thread(target=console.serve_forever, daemon=True).start()
    port = _free_port()
    log = tmp_path / 'proxy.log'
    try:
        if server == 'in-process':
            yield from _in_process(port, str(web), log, Proxy(port, tokens, console, log, moved))
        else:
            yield from _forking(port, str(web), log, Proxy(port, tokens, console, log, moved))
    finally:
        console.shutdown()
        console.server_close()


def _forking(port: int, web: str, log: pathlib.Path, proxy: Proxy) -> Iterator[Proxy]:
    proc = multiprocessing.get_context('fork').Process(
        target=_serve, args=('novalite-novncproxy', port, web, str(log)))
    proc.start()
    try:
        _wait_listening(port, proc)
        yield proxy
    finally:
        proc.terminate()  # SIGTERM: websockify's own stop
        proc.join(10)
        assert proc.exitcode == 0


def _in_process(port: int, web: str, log: pathlib.Path, proxy: Proxy) -> Iterator[Proxy]:
    handler = logging.FileHandler(log)
    logger = logging.getLogger('novalite.console')
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    cwd = os.getcwd()
    server = websocketproxy.InProcessProxy('novalite-novncproxy', '127.0.0.1', port, web)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
        assert os.getcwd() == cwd  # the process's directory is everyone's
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()


def _connect(url: str, **kwargs: object) -> websocket.WebSocket:
    return websocket.create_connection(url, timeout=10, **kwargs)


def _close_of(ws: websocket.WebSocket) -> tuple[int, str]:
    """The close frame the proxy sends: (code, reason)."""
    while True:
        opcode, frame = ws.recv_data_frame(True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return int.from_bytes(frame.data[:2], 'big'), frame.data[2:].decode()


def _read(ws: websocket.WebSocket, size: int) -> bytes:
    data = b''
    while len(data) < size:
        opcode, chunk = ws.recv_data()
        assert opcode == websocket.ABNF.OPCODE_BINARY, (opcode, chunk)
        data += chunk
    return data


def test_good_token_relays_bytes_both_ways(proxy: Proxy) -> None:
    token = proxy.token('good')
    ws = _connect(proxy.url('?token=%s' % token), subprotocols=['binary'],
                  origin='http://127.0.0.1:%d' % proxy.port)
    try:
        assert _read(ws, len(GREETING)) == GREETING
        ws.send_binary(b'ls\r')
        assert _read(ws, len(b'echo:ls\r')) == b'echo:ls\r'
    finally:
        ws.close()
    assert 'connecting to 127.0.0.1:%d' % proxy.console.port in proxy.log.read_text()


def test_token_from_novnc_path_and_cookie(proxy: Proxy) -> None:
    ws = _connect(proxy.url('?path=%%3Ftoken%%3D%s' % proxy.token('in-path')))
    assert _read(ws, len(GREETING)) == GREETING
    ws.close()
    ws = _connect(proxy.url(), cookie='other=1; token=%s' % proxy.token('in-cookie'))
    assert _read(ws, len(GREETING)) == GREETING
    ws.close()


@pytest.mark.parametrize('case', ['unknown', 'expired', 'used', 'none'])
def test_bad_tokens_are_refused_with_the_reason(proxy: Proxy, case: str) -> None:
    token = {'unknown': 'tok-nobody-made-this', 'none': ''}.get(case, 'tok-%s-1' % case)
    if case == 'expired':
        proxy.token(token, ttl=-1)
    elif case == 'used':
        proxy.token(token)
        first = _connect(proxy.url('?token=%s' % token))
        assert _read(first, len(GREETING)) == GREETING
        first.close()
    ws = _connect(proxy.url('?token=%s' % token))
    assert _close_of(ws) == (1008, "The token '***' is invalid or has expired")
    log = proxy.log.read_text()
    assert 'refused: The token' in log
    assert 'Traceback' not in log
    if token:
        assert token not in log  # the request lines show token=***


@pytest.mark.parametrize('origin, reason', [
    ('http://evil.example.com', 'Origin header does not match this host.'),
    ('https://127.0.0.1', 'Origin header protocol does not match this host.'),
    ('null', 'Origin header not valid.'),
])
def test_a_bad_origin_is_refused(proxy: Proxy, origin: str, reason: str) -> None:
    ws = _connect(proxy.url('?token=%s' % proxy.token('t')), origin=origin)
    assert _close_of(ws) == (1008, reason)
    assert 'refused: %s' % reason in proxy.log.read_text()


@pytest.mark.parametrize('proxy', [{'console': {'allowed_origins': ['horizon.example.com']}}],
                         indirect=True)
def test_allowed_origins_and_forwarded_proto(proxy: Proxy) -> None:
    ws = _connect(proxy.url('?token=%s' % proxy.token('horizon')),
                  origin='http://horizon.example.com')
    assert _read(ws, len(GREETING)) == GREETING
    ws.close()
    # A TLS-terminating proxy in front: the page is https, the hop to us plain.
    ws = _connect(proxy.url('?token=%s' % proxy.token('fwd')), origin='https://127.0.0.1',
                  header=['X-Forwarded-Proto: http'])
    assert _read(ws, len(GREETING)) == GREETING
    ws.close()


def test_serial_console_origin_scheme_is_ws_or_http() -> None:
    websocketproxy.check_origin('http://proxy', 'proxy:6083', None, 'serial')
    with pytest.raises(websocketproxy.ConsoleRefused, match='protocol'):
        websocketproxy.check_origin('https://proxy', 'proxy:6083', None, 'serial')
    with pytest.raises(websocketproxy.ConsoleRefused, match='validate the protocol'):
        websocketproxy.check_origin('http://proxy', 'proxy:6083', None, 'spice-html5')


@pytest.mark.parametrize('proxy', [{'consoleauth': {'enforce_session_timeout': True}}],
                         indirect=True)
def test_session_ends_with_the_token(proxy: Proxy) -> None:
    ws = _connect(proxy.url('?token=%s' % proxy.token('short', ttl=2)))
    assert _read(ws, len(GREETING)) == GREETING
    assert _close_of(ws) == (1000, 'The console session has expired.')


def test_a_port_no_longer_the_guests_is_refused(proxy: Proxy) -> None:
    proxy.moved.write_text('%d\n' % proxy.console.port)
    ws = _connect(proxy.url('?token=%s' % proxy.token('moved')))
    assert _close_of(ws) == (1008, 'The console is no longer at the port of this token.')


def test_a_compute_host_that_does_not_answer_closes_with_1011(proxy: Proxy) -> None:
    proxy.moved.write_text('host-down\n')
    ws = _connect(proxy.url('?token=%s' % proxy.token('tok-host-down')))
    assert _close_of(ws) == (1011, 'The compute host of this console did not answer.')
    assert 'Traceback' not in proxy.log.read_text()


def test_a_deleted_server_is_refused(proxy: Proxy) -> None:
    ws = _connect(proxy.url('?token=%s' % proxy.token('gone', instance_uuid=DELETED_SERVER)))
    assert _close_of(ws) == (1008, 'The server of this console no longer exists.')


def test_console_unreachable_closes_with_1011(proxy: Proxy) -> None:
    ws = _connect(proxy.url('?token=%s' % proxy.token('down', port=_free_port())))
    assert _close_of(ws) == (1011, 'Failed to connect to the console.')


def test_the_novnc_page_is_served_without_listings(proxy: Proxy) -> None:
    base = 'http://127.0.0.1:%d' % proxy.port
    with urllib.request.urlopen(base + '/vnc_auto.html', timeout=10) as resp:
        assert resp.status == 200
        assert b'noVNC double' in resp.read()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(base + '/app/', timeout=10)
    assert err.value.code == 404
    # A directory redirect to //host/... would send the browser to another site.
    with socket.create_connection(('127.0.0.1', proxy.port), timeout=10) as sock:
        sock.sendall(b'GET //app HTTP/1.0\r\n\r\n')
        head = sock.makefile('rb').read().split(b'\r\n\r\n')[0]
    assert b'Location: //' not in head, head


def test_a_token_store_that_fails_closes_with_1011(proxy: Proxy) -> None:
    # The double's file gone: redeem fails as a database that does not answer would.
    proxy.tokens.path.unlink()
    ws = _connect(proxy.url('?token=tok-any'))
    assert _close_of(ws) == (1011, 'The console token could not be checked.')
    assert 'the token could not be checked' in proxy.log.read_text()


IN_PROCESS = [{'server': 'in-process'}]


@pytest.mark.parametrize('proxy', IN_PROCESS, indirect=True)
def test_in_process_proxy_relays_and_serves_the_page(proxy: Proxy) -> None:
    test_good_token_relays_bytes_both_ways(proxy)
    with urllib.request.urlopen('http://127.0.0.1:%d/vnc_auto.html' % proxy.port,
                                timeout=10) as resp:
        assert b'noVNC double' in resp.read()


@pytest.mark.parametrize('proxy', IN_PROCESS, indirect=True)
def test_in_process_proxy_refuses_a_used_token(proxy: Proxy) -> None:
    test_bad_tokens_are_refused_with_the_reason(proxy, 'used')


# -- the whole path: the API's console URL, the token in the cell database, the compute
#    host's port check over RPC, the fake driver's console (in-process stack and proxies)

@pytest.fixture(scope='module')
def console_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, dict]]:
    """A stack with serial consoles, its noVNC and serial proxies (``InProcessProxy``),
    and one ACTIVE server; yields (stack, {'novnc': port, 'serial': port, 'server': id})."""
    from novalite.api.openstack.compute import remote_consoles, server_actions
    from novalite.compute import manager as compute_manager
    # Until the console work is wired everywhere (issue 23): the legacy actions' module
    # and the manager's RPC 1.9 target, as tests/functional/test_consoles_api.py does.
    if remote_consoles not in server_actions.ACTION_MODULES:
        server_actions.ACTION_MODULES.append(remote_consoles)
    if compute_manager.ComputeManager.target.version in ('1.7', '1.8'):
        compute_manager.ComputeManager.target = oslo_messaging.Target(version='1.9')
    ports = {'novnc': _free_port(), 'serial': _free_port()}
    tmp = tmp_path_factory.mktemp('console-stack')
    (tmp / 'web').mkdir()
    (tmp / 'web' / 'vnc_auto.html').write_text('<html>noVNC double</html>')
    stack = Stack(str(tmp), compute_hosts=('host1',), overrides={
        ('serial_console', 'enabled'): True,
        ('vnc', 'novncproxy_base_url'):
            'http://127.0.0.1:%d/vnc_auto.html' % ports['novnc'],
        ('serial_console', 'base_url'): 'ws://127.0.0.1:%d/' % ports['serial']})
    stack.start()
    proxies = [websocketproxy.InProcessProxy('novalite-novncproxy', '127.0.0.1',
                                             ports['novnc'], str(tmp / 'web')),
               websocketproxy.InProcessProxy('novalite-serialproxy', '127.0.0.1',
                                             ports['serial'], None)]
    threads = [threading.Thread(target=p.serve_forever, daemon=True) for p in proxies]
    for thread in threads:
        thread.start()
    try:
        resp = stack.request('POST', '/flavors', json={'flavor': {
            'name': 'proxy.tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}})
        assert resp.status_code == 200, resp.text
        flavor = resp.json()['flavor']['id']
        server_id = _boot(stack, flavor)
        yield stack, {**ports, 'server': server_id, 'flavor': flavor}
    finally:
        for proxy_server in proxies:
            proxy_server.shutdown()
            proxy_server.server_close()
        stack.stop()


def _boot(stack: Stack, flavor: str) -> str:
    resp = stack.request('POST', '/servers', token='alice:proj-a', json={'server': {
        'name': 'console-vm', 'imageRef': stack.image['id'], 'flavorRef': flavor,
        'networks': 'none'}}, version='2.37')
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    stack.wait_for_status(server_id, ('ACTIVE',))
    return server_id


def _console_url(stack: Stack, server_id: str, protocol: str, console_type: str) -> str:
    resp = stack.request('POST', '/servers/%s/remote-consoles' % server_id,
                         token='alice:proj-a', version='2.6',
                         json={'remote_console': {'protocol': protocol, 'type': console_type}})
    assert resp.status_code == 200, resp.text
    return resp.json()['remote_console']['url']


def test_novnc_url_through_the_proxy_to_the_guest(console_stack) -> None:
    stack, info = console_stack
    page = _console_url(stack, info['server'], 'vnc', 'novnc')
    # noVNC's page opens the websocket at its ``path`` parameter, on the page's host.
    path = urllib.parse.parse_qs(urllib.parse.urlsplit(page).query)['path'][0]
    ws_url = 'ws://127.0.0.1:%d/%s' % (info['novnc'], path.lstrip('/'))
    origin = 'http://127.0.0.1:%d' % info['novnc']
    ws = _connect(ws_url, subprotocols=['binary'], origin=origin)
    try:
        assert _read(ws, len(fake.VNC_BANNER)) == fake.VNC_BANNER
        ws.send_binary(b'RFB 003.008\n')
        assert _read(ws, 12) == b'RFB 003.008\n'
    finally:
        ws.close()
    # One-time: the same URL again is refused.
    again = _connect(ws_url, origin=origin)
    assert _close_of(again) == (1008, "The token '***' is invalid or has expired")


def test_serial_url_through_the_proxy_to_the_guest(console_stack) -> None:
    stack, info = console_stack
    url = _console_url(stack, info['server'], 'serial', 'serial')
    assert url.startswith('ws://127.0.0.1:%d/' % info['serial'])
    ws = _connect(url)
    try:
        assert _read(ws, len(fake.SERIAL_BANNER)) == fake.SERIAL_BANNER
        ws.send_binary(b'root\r')
        assert _read(ws, 5) == b'root\r'
    finally:
        ws.close()


def test_a_token_of_a_deleted_server_is_refused(console_stack) -> None:
    stack, info = console_stack
    server_id = _boot(stack, info['flavor'])
    url = _console_url(stack, server_id, 'serial', 'serial')
    assert stack.request('DELETE', '/servers/%s' % server_id,
                         token='alice:proj-a').status_code == 204
    stack.wait_for_deleted(server_id)
    ws = _connect(url)
    assert _close_of(ws) == (1008, "The token '***' is invalid or has expired")



# -- noVNC itself: Debian's web client in headless Chromium, through the proxy, showing
#    a QEMU's screen (its VNC server; no guest needed: SeaBIOS draws)

NOVNC = '/usr/share/novnc'


def _need(*paths: str) -> None:
    missing = [p for p in paths if not (shutil.which(p) or os.path.exists(p))]
    if missing:
        if os.environ.get('CI'):
            pytest.fail('not installed (tools/setup.sh): %s' % missing)
        pytest.skip('not installed: %s' % missing)


@pytest.fixture
def qemu_vnc(tmp_path: pathlib.Path) -> Iterator[int]:
    """A QEMU with no disk (SeaBIOS's screen) and its VNC server; yields the port."""
    _need('qemu-system-x86_64')
    port = _free_port()
    proc = subprocess.Popen(
        ['qemu-system-x86_64', '-nodefaults', '-machine', 'accel=tcg', '-m', '64',
         '-vga', 'std', '-display', 'none', '-vnc', '127.0.0.1:%d' % (port - 5900)],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / 'qemu.log', 'wb'))  # noqa: SIM115
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, (tmp_path / 'qemu.log').read_text()
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, 'QEMU\'s VNC server does not listen'
                time.sleep(0.1)
        yield port
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize('proxy', [{'web': NOVNC}], indirect=True)
def test_novnc_in_headless_chromium_shows_the_screen(proxy: Proxy, qemu_vnc: int,
                                                     tmp_path: pathlib.Path) -> None:
    _need('chromium', NOVNC)
    token = proxy.token('tok-browser', port=qemu_vnc)
    debug_port = _free_port()
    chromium = subprocess.Popen(
        ['chromium', '--headless=new', '--no-sandbox', '--disable-gpu',
         '--remote-debugging-port=%d' % debug_port, '--user-data-dir=%s' % (tmp_path / 'c'),
         '--window-size=1024,768', 'about:blank'],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / 'chromium.log', 'wb'))  # noqa: SIM115
    try:
        browser = DevTools(debug_port)
        # The URL the API gives for novncproxy_base_url = .../vnc_lite.html.
        browser.call('Page.navigate', url='http://127.0.0.1:%d/vnc_lite.html?path=%%3Ftoken'
                                          '%%3D%s' % (proxy.port, token))
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            status = browser.evaluate("document.getElementById('status')?.textContent")
            painted = browser.evaluate(
                "(() => { const c = document.querySelector('canvas');"
                " if (!c || !c.width) return 0;"
                " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                " let n = 0; for (let i = 0; i < d.length; i += 4)"
                " if (d[i] || d[i + 1] || d[i + 2]) n++; return n; })()")
            if status and str(status).startswith('Connected') and painted:
                break
            time.sleep(0.5)
        assert str(status).startswith('Connected to QEMU'), status
        assert painted, 'the screen is blank'
        shot = base64.b64decode(browser.call('Page.captureScreenshot')['data'])
        (tmp_path / 'novnc.png').write_bytes(shot)
        assert shot.startswith(b'\x89PNG')
    finally:
        chromium.kill()
        chromium.wait()
    log = proxy.log.read_text()
    assert 'connecting to 127.0.0.1:%d' % qemu_vnc in log
    assert token not in log
