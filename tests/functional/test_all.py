"""novalite-all as a user runs it: the real command, the real Glance, openstackclient."""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests
import websocket
import yaml

from novalite.virt import fake

BIN = os.path.dirname(sys.executable)
READY = 'novalite-all ready'


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class AllInOne:
    """A running ``novalite-all`` and the lines it printed (``--no-network`` unless
    ``network``)."""

    def __init__(self, state_dir: str, port: int | None = None, network: bool = False,
                 computes: int = 1) -> None:
        self.state_dir = state_dir
        self.port = port or _free_port()
        self.lines: list[str] = []
        self._lines: queue.Queue = queue.Queue()
        self.process = subprocess.Popen(
            [os.path.join(BIN, 'novalite-all'), '--state-dir', state_dir,
             '--port', str(self.port), '--computes', str(computes),
             *(() if network else ('--no-network',))],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line.rstrip('\n'))
        self._lines.put(None)

    def wait_for_line(self, wanted: str | None, timeout: float = 60.0) -> None:
        """Collect printed lines until ``wanted``; ``None``: until the output ends."""
        deadline = time.monotonic() + timeout
        while wanted is None or wanted not in self.lines:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError('no %r within %ss: %s'
                                     % (wanted, timeout, self.lines)) from None
            if line is None:
                if wanted is None:
                    return
                raise AssertionError('novalite-all exited with %s: %s'
                                     % (self.process.wait(), '\n'.join(self.lines)))
            self.lines.append(line)

    def printed(self, pattern: str) -> re.Match:
        for line in self.lines:
            match = re.search(pattern, line)
            if match:
                return match
        raise AssertionError('nothing printed matches %r: %s' % (pattern, self.lines))

    @property
    def api(self) -> str:
        return 'http://127.0.0.1:%d/v2.1' % self.port

    def glance_pid(self) -> int:
        return int(self.printed(r'Glance .*\(pid (\d+)\)').group(1))

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        self.process.send_signal(signum)
        try:
            returncode = self.process.wait(timeout)
        finally:
            self.kill()
        self.wait_for_line(None, timeout=5)  # the lines printed while stopping
        return returncode

    def kill(self) -> None:
        """Last resort after a failed test: no process may outlive it."""
        if self.process.poll() is not None:
            return  # it stopped Glance itself
        self.process.kill()
        self.process.wait()
        try:
            os.killpg(self.glance_pid(), signal.SIGKILL)
        except (AssertionError, ProcessLookupError):
            pass


def _process_group(pgid: int) -> list[int]:
    """Living processes of process group ``pgid`` (Glance's gunicorn master and workers)."""
    members = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as stat:
                fields = stat.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        # Fields after the command: state, ppid, pgrp, ...; a zombie is dead.
        if int(fields[2]) == pgid and fields[0] != 'Z':
            members.append(int(entry))
    return members


def _openstack(state_dir: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=os.path.join(state_dir, 'clouds.yaml'))
    return subprocess.run([os.path.join(BIN, 'openstack'), '--os-cloud', 'novalite', *args],
                          env=env, capture_output=True, text=True, timeout=120)


def _get(url: str, **params: str) -> dict:
    resp = requests.get(url, params=params, timeout=30,
                        headers={'X-Auth-Token': 'admin:admin'})
    resp.raise_for_status()
    return resp.json()


class FirstRun:
    """A cold start, ``openstack server create --wait``, then SIGTERM."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.cloud = AllInOne(state_dir)
        try:
            self.cloud.wait_for_line(READY)
            self.created = _openstack(
                state_dir, 'server', 'create', '--image', 'cirros-tiny', '--flavor',
                'm1.nano', '--nic', 'none', '--wait', '-f', 'json', 'vm1')
            # The serial proxy thread reaches the fake guest's console over the fake bus.
            self.serial = _openstack(state_dir, 'console', 'url', 'show', '--serial', '-f',
                                     'value', '-c', 'url', 'vm1').stdout.strip()
            ws = websocket.create_connection(self.serial, timeout=10)
            try:
                self.greeting = ws.recv()
            finally:
                ws.close()
            self.glance_pid = self.cloud.glance_pid()
            self.glance_ran = bool(_process_group(self.glance_pid))
            self.files = sorted(os.listdir(state_dir))
            self.returncode = self.cloud.stop(signal.SIGTERM)
        finally:
            self.cloud.kill()


@pytest.fixture(scope='module')
def first_run(tmp_path_factory) -> FirstRun:
    return FirstRun(str(tmp_path_factory.mktemp('novalite-all')))


def test_server_create_with_openstackclient_then_sigterm_stops_everything(first_run):
    cloud = first_run.cloud
    assert cloud.printed(r'Compute API\s+(\S+)').group(1) == cloud.api
    clouds_yaml = os.path.join(first_run.state_dir, 'clouds.yaml')
    assert cloud.printed('export OS_CLIENT_CONFIG_FILE=(.*)').group(1) == clouds_yaml
    with open(clouds_yaml) as f:
        config = yaml.safe_load(f)['clouds']['novalite']
    assert config['auth'] == {'endpoint': cloud.api, 'token': 'admin:admin'}
    assert config['compute_endpoint_override'] == cloud.api
    assert 'network_endpoint_override' not in config  # --no-network

    assert first_run.created.returncode == 0, first_run.created.stderr
    server = json.loads(first_run.created.stdout)
    assert server['status'] == 'ACTIVE'
    assert server['OS-EXT-SRV-ATTR:host'] == 'compute1'

    assert first_run.serial.startswith(cloud.printed(r'Serial proxy\s+(\S+)').group(1))
    assert first_run.greeting == fake.SERIAL_BANNER
    assert first_run.glance_ran
    assert first_run.returncode == 0
    assert cloud.lines[-1] == 'novalite-all: SIGTERM received, stopping'
    assert _process_group(first_run.glance_pid) == []
    with pytest.raises(requests.ConnectionError):
        requests.get(cloud.api, timeout=5)


def test_restart_reuses_the_state_dir(first_run):
    state_dir = first_run.state_dir
    cloud = AllInOne(state_dir)
    try:
        cloud.wait_for_line(READY)
        flavors = _get(cloud.api + '/flavors')['flavors']
        assert sorted((f['name'], f['id']) for f in flavors) == [('m1.nano', '42'),
                                                                 ('m1.tiny', '1')]
        glance_url = cloud.printed(r'Glance\s+(\S+)').group(1)
        images = _get(glance_url + '/v2/images', name='cirros-tiny')['images']
        assert len(images) == 1
        assert sorted(os.listdir(state_dir)) == first_run.files
        servers = _get(cloud.api + '/servers')['servers']
        assert [s['name'] for s in servers] == ['vm1']

        resp = requests.post(
            cloud.api + '/servers', timeout=30,
            headers={'X-Auth-Token': 'admin:admin', 'OpenStack-API-Version': 'compute 2.37'},
            json={'server': {'name': 'vm2', 'imageRef': images[0]['id'], 'flavorRef': '1',
                             'networks': 'none'}})
        assert resp.status_code == 202, resp.text
        server_id = resp.json()['server']['id']
        deadline = time.monotonic() + 30
        while _get(cloud.api + '/servers/' + server_id)['server']['status'] == 'BUILD':
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert _get(cloud.api + '/servers/' + server_id)['server']['status'] == 'ACTIVE'
        assert cloud.stop(signal.SIGINT) == 0
    finally:
        cloud.kill()
    assert cloud.lines[-1] == 'novalite-all: SIGINT received, stopping'
    assert _process_group(cloud.glance_pid()) == []


def test_a_taken_port_is_refused_with_a_clear_message(tmp_path):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        cloud = AllInOne(str(tmp_path), port=taken.getsockname()[1])
        try:
            assert cloud.process.wait(60) == 1
        finally:
            cloud.kill()
    cloud.wait_for_line(None, timeout=5)
    assert cloud.lines == ['novalite-all: port %d is in use: choose another with --port'
                           % cloud.port]
