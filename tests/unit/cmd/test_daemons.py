"""The daemons as real processes: RabbitMQ vhost, SQLite databases, signals, WSGI servers.

Each daemon is started as its systemd unit starts it (``novalite-X --config-file F``), in
its own session: oslo.service's threading launcher of several workers relays SIGHUP to
its process group.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator

import oslo_messaging as messaging
import pytest

BIN = os.path.dirname(sys.executable)
RABBIT = os.environ.get('NOVALITE_TEST_RABBIT_URL', 'rabbit://guest:guest@127.0.0.1:5672')


def _rabbitmqctl(*args: str) -> None:
    subprocess.run(['rabbitmqctl', *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope='module')
def vhost() -> Iterator[str]:
    """A throw-away RabbitMQ vhost; the transport URL that reaches it."""
    if shutil.which('rabbitmqctl') is None:
        if os.environ.get('CI'):
            pytest.fail('rabbitmqctl not found')
        pytest.skip('RabbitMQ is not installed')
    name = 'nltest_%s' % uuid.uuid4().hex[:12]
    _rabbitmqctl('add_vhost', name)
    try:
        _rabbitmqctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*')
        yield '%s/%s' % (RABBIT, name)
    finally:
        _rabbitmqctl('delete_vhost', name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Site:
    """A config file over SQLite databases set up with novalite-manage, and its daemons."""

    def __init__(self, path, transport_url: str) -> None:
        self.path = path
        self.cell_db = path / 'cell1.sqlite'
        self.procs: list[subprocess.Popen] = []
        self.logs: dict[str, os.PathLike] = {}
        self._default = ('transport_url = %s\nhost = ctl\nreport_interval = 1\n'
                         'rpc_ping_enabled = true\ngraceful_shutdown_timeout = 20\n'
                         % transport_url)
        self._databases = ('[api_database]\nconnection = sqlite:///%s\n'
                           '[database]\nconnection = sqlite:///%s\n'
                           % (path / 'api.sqlite', self.cell_db))
        self.config('base')
        for argv in (('api_db', 'sync'), ('db', 'sync'), ('cell_v2', 'simple_cell_setup')):
            subprocess.run([os.path.join(BIN, 'novalite-manage'), '--config-file',
                            str(self.path / 'base.conf'), *argv],
                           check=True, capture_output=True, timeout=60)

    def config(self, name: str, default: str = '', api: str = '') -> str:
        """Write ``name.conf``: the base options plus ``default`` lines in [DEFAULT] and
        ``api`` lines in [api]; return its path."""
        conf = self.path / ('%s.conf' % name)
        conf.write_text('[DEFAULT]\n%s%s%s[api]\nauth_strategy = noauth2\n'
                        'osapi_compute_listen = 127.0.0.1\n%s'
                        % (self._default, default, self._databases, api))
        return str(conf)

    def start(self, binary: str, config_file: str) -> subprocess.Popen:
        # One log per process: several tests start the same binary.
        self.logs[binary] = self.path / ('%s-%d.log' % (binary, len(self.procs)))
        log = open(self.logs[binary], 'wb')  # noqa: SIM115
        proc = subprocess.Popen([os.path.join(BIN, binary), '--config-file', config_file],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def log(self, binary: str) -> str:
        """The log of the last ``binary`` process started."""
        return self.logs[binary].read_text()

    def report_count(self, binary: str) -> int:
        with sqlite3.connect(self.cell_db) as conn:
            row = conn.execute('SELECT report_count FROM services WHERE binary = ? '
                               'AND deleted = 0', (binary,)).fetchone()
        return row[0] if row else 0

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


@pytest.fixture(scope='module')
def _site(tmp_path_factory, vhost) -> Site:
    return Site(tmp_path_factory.mktemp('site'), vhost)


@pytest.fixture
def site(_site) -> Iterator[Site]:
    """The module's databases and bus; the daemons a test starts die with it."""
    yield _site
    _site.cleanup()


def _wait_for(check: Callable[[], object], timeout: float = 20.0, what: str = '') -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError('timed out waiting for %s' % (what or check))


def _children(pid: int) -> set[int]:
    out = subprocess.run(['pgrep', '-P', str(pid)], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def _terminate(proc: subprocess.Popen, within: float) -> float:
    """SIGTERM ``proc``; assert it and its children exit 0 within ``within`` seconds."""
    children = _children(proc.pid)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=within) == 0
    elapsed = time.monotonic() - start
    for pid in children:
        _wait_for(lambda pid=pid: not os.path.exists('/proc/%d' % pid), 5, 'worker exit')
    return elapsed


def _ping(transport_url: str, topic: str, server: str) -> object:
    """Call oslo.messaging's built-in ping endpoint of one RPC server."""
    from novalite.conf import CONF
    transport = messaging.get_rpc_transport(CONF, url=transport_url)
    try:
        client = messaging.get_rpc_client(
            transport, messaging.Target(exchange='novalite', topic=topic, server=server),
            timeout=10)
        return client.call({}, 'oslo_rpc_server_ping')
    finally:
        transport.cleanup()


def _get(url: str, token: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={'X-Auth-Token': token} if token else {})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.read()


def test_sighup_keeps_serving_and_sigterm_exits_promptly(site, vhost):
    conf = site.config('daemons')
    daemons = {b: site.start(b, conf) for b in ('novalite-conductor', 'novalite-scheduler')}
    for binary in daemons:
        _wait_for(lambda b=binary: site.report_count(b) >= 2 and 'started on ctl' in site.log(b),
                  what='%s heartbeats' % binary)
    # One worker of the threading backend: the daemon is one process, no master.
    workers = {b: _children(p.pid) for b, p in daemons.items()}
    assert workers == {b: set() for b in daemons}, workers

    # A changed mutable option (debug) is applied on SIGHUP, without a restart.
    site.config('daemons', default='debug = true\n')
    for proc in daemons.values():
        proc.send_signal(signal.SIGHUP)
    for binary, proc in daemons.items():
        _wait_for(lambda b=binary: 'reloaded its configuration' in site.log(b),
                  what='%s reload' % binary)
        count = site.report_count(binary)
        _wait_for(lambda b=binary, c=count: site.report_count(b) >= c + 2,
                  what='%s heartbeats after SIGHUP' % binary)
        assert _children(proc.pid) == workers[binary]
        assert 'DEBUG' in site.log(binary)
    assert _ping(vhost, 'conductor', 'ctl') == 'pong'

    for binary, proc in daemons.items():
        assert _terminate(proc, within=5) < 3, binary
        assert '%s stopped on ctl' % binary in site.log(binary)


def test_two_workers_reload_in_place_on_sighup(site, vhost):
    """Several workers run under oslo.service's launcher: a master and a process each,
    which reload their configuration without being forked again."""
    conf = site.config('workers', api='[conductor]\nworkers = 2\n')
    proc = site.start('novalite-conductor', conf)
    _wait_for(lambda: site.log('novalite-conductor').count('started on ctl') == 2,
              what='two conductor workers')
    workers = _children(proc.pid)
    assert len(workers) == 2, workers
    site.config('workers', default='debug = true\n', api='[conductor]\nworkers = 2\n')
    proc.send_signal(signal.SIGHUP)
    _wait_for(lambda: site.log('novalite-conductor').count('reloaded its configuration')
              == 2, what='both workers reloading')
    assert _children(proc.pid) == workers
    assert _ping(vhost, 'conductor', 'ctl') == 'pong'
    assert _terminate(proc, within=5) < 3


def test_eventlet_conductor_serves_rpc(site, vhost):
    proc = site.start('novalite-conductor',
                      site.config('eventlet', default='concurrency_backend = eventlet\n'))
    count = site.report_count('novalite-conductor')
    _wait_for(lambda: site.report_count('novalite-conductor') > count, what='heartbeat')
    assert _ping(vhost, 'conductor', 'ctl') == 'pong'
    # The eventlet launcher runs one worker in its own process, as the threading one.
    assert _children(proc.pid) == set()
    assert _terminate(proc, within=5) < 3


def test_eventlet_api_with_two_workers(site):
    port = _free_port()
    conf = site.config('api', default='concurrency_backend = eventlet\n',
                       api='osapi_compute_listen_port = %d\nosapi_compute_workers = 2\n' % port)
    proc = site.start('novalite-api', conf)
    base = 'http://127.0.0.1:%d' % port

    def answers() -> bool:
        try:
            return _get(base + '/v2.1')[0] == 200
        except OSError:
            return False
    _wait_for(answers, what='novalite-api')
    assert len(_children(proc.pid)) == 2
    for _ in range(4):
        status, body = _get(base + '/v2.1/flavors', token='admin:admin')
        assert (status, body) == (200, b'{"flavors": []}')
    assert 'backend._eventlet' in site.log('novalite-api')
    assert _terminate(proc, within=5) < 3


def test_wsgi_module_under_gunicorn(site):
    gunicorn = os.path.join(BIN, 'gunicorn')
    if not os.path.exists(gunicorn):
        pytest.fail('gunicorn is not installed in the virtualenv')
    port = _free_port()
    env = dict(os.environ, NOVALITE_CONFIG_FILES=site.config('wsgi'))
    log = open(site.path / 'gunicorn.log', 'wb')  # noqa: SIM115
    proc = subprocess.Popen([gunicorn, '--no-control-socket', '-b', '127.0.0.1:%d' % port,
                             'novalite.wsgi.osapi_compute:application'],
                            env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    log.close()
    site.procs.append(proc)
    base = 'http://127.0.0.1:%d' % port

    def answers() -> bool:
        try:
            return _get(base + '/v2.1')[0] == 200
        except OSError:
            return False
    _wait_for(answers, what='gunicorn')
    assert _get(base + '/v2.1/flavors', token='admin:admin') == (200, b'{"flavors": []}')
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
