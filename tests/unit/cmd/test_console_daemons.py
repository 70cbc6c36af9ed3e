"""novalite-novncproxy and novalite-serialproxy as their systemd units start them: they
listen, serve what they serve before any token is involved, and stop on SIGTERM."""
from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator

import pytest

BIN = os.path.dirname(sys.executable)
NOVNC = '/usr/share/novnc'


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Daemon:
    def __init__(self, tmp_path: pathlib.Path) -> None:
        self.tmp_path = tmp_path
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = tmp_path / 'proxy.log'

    def start(self, binary: str, conf: str) -> subprocess.Popen:
        config_file = self.tmp_path / 'proxy.conf'
        config_file.write_text('[DEFAULT]\ntransport_url = fake://\n%s' % conf)
        with open(self.log_path, 'wb') as log:
            self.proc = subprocess.Popen(
                [os.path.join(BIN, binary), '--config-file', str(config_file)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        return self.proc

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for(self, check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if check():
                return
            assert self.proc is not None and self.proc.poll() is None, self.log()
            time.sleep(0.1)
        raise AssertionError('timed out waiting for %s:\n%s' % (what, self.log()))

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError('the daemon did not stop within 20 s of SIGTERM; its '
                                 'log:\n%s' % self.log()) from None


@pytest.fixture
def daemon(tmp_path: pathlib.Path) -> Iterator[Daemon]:
    daemon = Daemon(tmp_path)
    yield daemon
    if daemon.proc is not None and daemon.proc.poll() is None:
        os.killpg(daemon.proc.pid, signal.SIGKILL)
        daemon.proc.wait()


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, b''


def test_novncproxy_serves_novnc_and_stops_on_sigterm(daemon: Daemon) -> None:
    if not os.path.isdir(NOVNC):
        if os.environ.get('CI'):
            pytest.fail('Debian\'s novnc is not installed (tools/setup.sh)')
        pytest.skip('Debian\'s novnc is not installed')
    daemon.start('novalite-novncproxy',
                 '[vnc]\nnovncproxy_host = 127.0.0.1\nnovncproxy_port = %d\n' % daemon.port)
    daemon.wait_for(lambda: 'novalite-novncproxy listening on 127.0.0.1:%d' % daemon.port
                    in daemon.log(), 'the proxy to listen')
    base = 'http://127.0.0.1:%d' % daemon.port
    status, body = _get(base + '/vnc_auto.html')
    assert status == 200
    assert b'noVNC' in body
    assert _get(base + '/core/')[0] == 404  # no directory listings
    assert daemon.stop() == 0, daemon.log()
    assert 'novalite-novncproxy stopped' in daemon.log()


def test_serialproxy_only_upgrades_and_stops_on_sigterm(daemon: Daemon) -> None:
    daemon.start('novalite-serialproxy', '[serial_console]\nserialproxy_host = 127.0.0.1\n'
                 'serialproxy_port = %d\n' % daemon.port)
    daemon.wait_for(lambda: 'novalite-serialproxy listening' in daemon.log(),
                    'the proxy to listen')
    # No web client: a plain GET is not a websocket.
    assert _get('http://127.0.0.1:%d/' % daemon.port)[0] == 405
    assert daemon.stop() == 0, daemon.log()
    assert 'novalite-serialproxy stopped' in daemon.log()


def test_novncproxy_without_its_web_client_exits_1(daemon: Daemon, tmp_path) -> None:
    proc = daemon.start('novalite-novncproxy', 'web = %s\n[vnc]\nnovncproxy_port = %d\n'
                        % (tmp_path / 'missing', daemon.port))
    assert proc.wait(timeout=30) == 1
    assert 'Can not find html/js files at %s' % (tmp_path / 'missing') in daemon.log()


def test_a_proxy_that_cannot_listen_exits_1(daemon: Daemon) -> None:
    with socket.socket() as busy:
        busy.bind(('127.0.0.1', daemon.port))
        busy.listen()
        proc = daemon.start('novalite-serialproxy',
                            '[serial_console]\nserialproxy_host = 127.0.0.1\n'
                            'serialproxy_port = %d\n' % daemon.port)
        assert proc.wait(timeout=30) == 1
    assert 'cannot listen on 127.0.0.1:%d' % daemon.port in daemon.log()


def _self_signed(path: pathlib.Path) -> None:
    """A certificate and its key for 127.0.0.1, in one PEM file (as ``[DEFAULT] cert``)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, '127.0.0.1')])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
                     + cert.public_bytes(serialization.Encoding.PEM))


def test_ssl_only_proxy_takes_wss_with_its_minimum_version(daemon: Daemon, tmp_path) -> None:
    import ssl

    import websocket
    cert = tmp_path / 'self.pem'
    _self_signed(cert)
    daemon.start('novalite-serialproxy',
                 'ssl_only = true\ncert = %s\n[console]\nssl_minimum_version = tlsv1_3\n'
                 '[serial_console]\nserialproxy_host = 127.0.0.1\nserialproxy_port = %d\n'
                 % (cert, daemon.port))
    daemon.wait_for(lambda: 'novalite-serialproxy listening' in daemon.log(),
                    'the proxy to listen')
    url = 'wss://127.0.0.1:%d/' % daemon.port
    # TLS 1.3 and the proxy's certificate: the websocket opens (and, without a token,
    # is refused with the reason, which needs no database).
    ws = websocket.create_connection(url, timeout=10, sslopt={
        'cert_reqs': ssl.CERT_REQUIRED, 'ca_certs': str(cert), 'check_hostname': False})
    assert ws.sock.version() == 'TLSv1.3'
    opcode, frame = ws.recv_data_frame(True)
    assert (opcode, frame.data[2:]) == (websocket.ABNF.OPCODE_CLOSE,
                                        b"The token '***' is invalid or has expired")
    ws.close()
    # TLS 1.2 is below the minimum; plain HTTP is not served at all.
    tls12 = ssl.create_default_context(cafile=str(cert))
    tls12.check_hostname = False
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(('127.0.0.1', daemon.port), timeout=10) as sock, \
            pytest.raises(ssl.SSLError):
        tls12.wrap_socket(sock).close()
    with pytest.raises((websocket.WebSocketException, OSError)):
        websocket.create_connection('ws://127.0.0.1:%d/' % daemon.port, timeout=10)
    assert daemon.stop() == 0, daemon.log()
