"""Daemon start-up: the order of a service's start, the compute's wait for a conductor,
the one-process launcher's signals, and what a daemon process imports."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import objects, rpc, service
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.main import models as main_models
from tests.unit.scheduler.conftest import fake_rpc

__all__ = ['fake_rpc']

objects.register_all()

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cell_db(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'cell.sqlite')
    main_models.Base.metadata.create_all(engine.get_engine(url))
    CONF.set_override('connection', url, group='database')
    try:
        yield url
    finally:
        CONF.clear_override('connection', group='database')
        engine.dispose_all()


class _Manager:
    """A manager with nothing to do but record when its host was set up."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.target = messaging.Target(version='1.0')

    def init_host(self) -> None:
        self.events.append('init_host')

    def periodic_tasks(self, context: object) -> float:
        return 60

    def cleanup_host(self) -> None:
        pass


def _report_count() -> int:
    ref = objects.Service.get_by_host_and_binary(nl_context.get_admin_context(), 'h1',
                                                 'novalite-test')
    return -1 if ref is None else ref.report_count


def test_first_heartbeat_comes_once_the_rpc_server_serves(fake_rpc, cell_db, monkeypatch):
    """A service seen beating takes messages: its queue exists before the first beat."""
    events: list[str] = []
    real_get_server = rpc.get_server

    def get_server(target, endpoints):
        server = real_get_server(target, endpoints)
        real_start = server.start

        def start():
            events.append('rpc server start (heartbeats so far: %d)' % _report_count())
            real_start()
        server.start = start
        return server
    monkeypatch.setattr(service.rpc, 'get_server', get_server)
    svc = service.Service('h1', 'novalite-test', 'test', _Manager(events),
                          report_interval=60, periodic_interval=60)
    svc.start()
    try:
        assert events == ['init_host', 'rpc server start (heartbeats so far: 0)']
        assert _report_count() == 1
    finally:
        svc.stop()


class _Client:
    """Stands in for the conductor RPC client: the first ``misses`` pings time out."""

    def __init__(self, misses: int) -> None:
        self.misses = misses
        self.timeouts: list[float | None] = []

    def prepare(self, timeout=None):
        self.timeouts.append(timeout)
        return self

    def call(self, context, method, **kwargs):
        assert method == 'ping'
        if len(self.timeouts) <= self.misses:
            raise messaging.MessagingTimeout()
        return kwargs['arg']


def _conductor_api(client: _Client) -> conductor_rpcapi.ConductorAPI:
    api = conductor_rpcapi.ConductorAPI.__new__(conductor_rpcapi.ConductorAPI)
    api.client = client
    return api


def test_compute_pings_the_conductor_with_short_timeouts_until_it_answers():
    client = _Client(misses=3)
    _conductor_api(client).wait_until_ready(nl_context.get_admin_context())
    assert client.timeouts == [conductor_rpcapi.EARLY_PING_TIMEOUT] * 4


def test_a_conductor_missing_for_long_gets_the_rpc_timeout():
    client = _Client(misses=2)
    _conductor_api(client).wait_until_ready(nl_context.get_admin_context(),
                                            early_period=0)
    # None: the client's own timeout, [DEFAULT] rpc_response_timeout.
    assert client.timeouts == [None, None, None]


_LAUNCHED = '''
import sys, time
from novalite import service
from novalite.conf import CONF
HANG = {a for a in sys.argv[1:] if a.startswith('--hang')}
CONF([a for a in sys.argv[1:] if a not in HANG])

class Svc:
    def start(self):
        print('started', flush=True)
        if '--hang-fail' in HANG:
            raise RuntimeError('no database')
        if '--hang-start' in HANG:
            time.sleep(60)
    def reset(self):
        print('reset', flush=True)
    def stop(self):
        print('stopping', flush=True)
        if '--hang-stop' in HANG:
            time.sleep(60)
        print('stopped', flush=True)

sys.exit(service.OneProcessLauncher([Svc()]).run())
'''


def _launch(tmp_path, *flags: str) -> subprocess.Popen:
    conf = tmp_path / 'launch.conf'
    conf.write_text('[DEFAULT]\ngraceful_shutdown_timeout = 2\n')
    script = tmp_path / 'launched.py'
    script.write_text(_LAUNCHED)
    return subprocess.Popen([sys.executable, str(script), '--config-file', str(conf),
                             *flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=REPO)


def _expect(proc: subprocess.Popen, line: str) -> None:
    while True:
        out = proc.stdout.readline()
        assert out, 'the process ended before printing %r' % line
        if out.strip() == line:
            return


def test_one_process_launcher_reloads_on_sighup_and_stops_on_sigterm(tmp_path):
    proc = _launch(tmp_path)
    try:
        _expect(proc, 'started')
        proc.send_signal(signal.SIGHUP)
        _expect(proc, 'reset')
        proc.send_signal(signal.SIGTERM)
        _expect(proc, 'stopped')
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_one_process_launcher_exits_at_once_on_sigterm_during_start_up(tmp_path):
    proc = _launch(tmp_path, '--hang-start')
    try:
        _expect(proc, 'started')
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert time.monotonic() - started < 5
    finally:
        proc.kill()


def test_one_process_launcher_stops_and_exits_1_when_a_start_fails(tmp_path):
    proc = _launch(tmp_path, '--hang-fail')
    try:
        _expect(proc, 'stopped')
        assert proc.wait(10) == 1
    finally:
        proc.kill()


def test_one_process_launcher_exits_1_when_the_stop_outlasts_the_graceful_timeout(
        tmp_path):
    proc = _launch(tmp_path, '--hang-stop')
    try:
        _expect(proc, 'started')
        # Served (a reload is answered once running): a SIGTERM now is a stop.
        proc.send_signal(signal.SIGHUP)
        _expect(proc, 'reset')
        proc.send_signal(signal.SIGTERM)
        _expect(proc, 'stopping')
        assert proc.wait(10) == 1
    finally:
        proc.kill()


def _modules_after(code: str) -> set[str]:
    """Top-level modules a fresh interpreter holds after ``code`` (a daemon's imports)."""
    env = {k: v for k, v in os.environ.items() if k != 'NOVALITE_CONCURRENCY_BACKEND'}
    out = subprocess.run([sys.executable, '-c', code + '\nimport sys\n'
                          'print(" ".join(sorted(sys.modules)))'],
                         capture_output=True, text=True, check=True, env=env).stdout
    return set(out.split())


def test_a_compute_process_loads_neither_the_database_layer_nor_eventlet():
    """A compute reaches its database through the conductor: SQLAlchemy, oslo.db's
    engines and the models would cost it 19 MB and 0.3 s of start-up; eventlet is
    not the backend (17 MB and 0.2 s)."""
    loaded = _modules_after('import novalite.cmd.compute\nfrom novalite import objects\n'
                            'objects.register_all()')
    unwanted = {'sqlalchemy', 'oslo_db.sqlalchemy', 'novalite.db.main.models',
                'novalite.db.api.models', 'eventlet', 'greenlet'}
    assert not unwanted & loaded



def test_controller_daemons_load_pymysql_without_cryptography():
    """Prepared for the fork on MySQL, a conductor, a scheduler and the API's key pairs
    leave cryptography out until a key pair or an RSA login needs it: 8 MB of resident
    memory per process (see novalite.db.driver and novalite.crypto)."""
    loaded = _modules_after(
        'import novalite.cmd.conductor, novalite.cmd.scheduler\n'
        'import novalite.api.openstack.compute.keypairs\n'
        'from novalite import service\n'
        'from novalite.conf import CONF\n'
        'CONF([], default_config_files=[])\n'
        'CONF.set_override("connection", "mysql+pymysql://nova@127.0.0.1/nova", "database")\n'
        'service._prepare_fork()')
    assert 'pymysql' in loaded
    assert 'cryptography' not in loaded

def test_eventlet_stays_out_of_a_threading_process_and_comes_with_its_backend():
    loaded = _modules_after('import novalite\n'
                            'try:\n    import eventlet\nexcept ImportError:\n    pass')
    assert 'eventlet' not in loaded
    env = dict(os.environ, NOVALITE_CONCURRENCY_BACKEND='eventlet')
    out = subprocess.run([sys.executable, '-c', 'import novalite, sys\n'
                          'print("eventlet" in sys.modules)'],
                         capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == 'True'
