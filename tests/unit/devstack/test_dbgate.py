"""The database gate of the devstack-style stack (``tests.devstack.harness.dbgate``), run as
the stack runs it (a process of its own, closed and opened with signals) in front of an
echo server; and the restart delay of the systemd units the harness imitates."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from tests.devstack.harness import process
from tests.devstack.harness.stack import UNIT_DIR


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def echo() -> Iterator[int]:
    """The port of a server echoing every chunk back on each connection it keeps."""
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(16)

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                while chunk := conn.recv(4096):
                    conn.sendall(chunk)
            except OSError:
                pass

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


class GateProcess:
    def __init__(self, upstream: int, state_file: str) -> None:
        self.port = _free_port()
        self.state_file = state_file
        self.popen = subprocess.Popen([
            sys.executable, '-m', 'tests.devstack.harness.dbgate', '--state-file', state_file,
            str(self.port), '127.0.0.1', str(upstream)])
        self.wait('open')

    def wait(self, state: str) -> None:
        deadline = time.monotonic() + 10
        while True:
            try:
                with open(self.state_file) as f:
                    if f.read().split()[0] == state:
                        return
            except (OSError, IndexError):
                pass
            assert self.popen.poll() is None, 'the gate exited'
            assert time.monotonic() < deadline, 'the gate never became %s' % state
            time.sleep(0.01)

    def switch(self, sig: int, state: str) -> None:
        os.remove(self.state_file)
        self.popen.send_signal(sig)
        self.wait(state)

    def connect(self) -> socket.socket:
        return socket.create_connection(('127.0.0.1', self.port), timeout=5)


@pytest.fixture
def gate(echo, tmp_path) -> Iterator[GateProcess]:
    made = GateProcess(echo, str(tmp_path / 'state'))
    yield made
    made.popen.terminate()
    assert made.popen.wait(10) == 0


def _roundtrip(conn: socket.socket, data: bytes) -> bytes:
    conn.sendall(data)
    return conn.recv(4096)


def test_closed_gate_refuses_new_connections_and_resets_open_ones(gate):
    pooled = gate.connect()
    assert _roundtrip(pooled, b'select 1') == b'select 1'

    gate.switch(signal.SIGUSR1, 'closed')
    with pytest.raises(ConnectionRefusedError):
        gate.connect()
    # The pooled connection was reset: its next use fails (or reads the end at once).
    try:
        pooled.sendall(b'select 2')
        assert pooled.recv(4096) == b''
    except (ConnectionResetError, BrokenPipeError):
        pass
    pooled.close()

    gate.switch(signal.SIGUSR2, 'open')
    with gate.connect() as fresh:
        assert _roundtrip(fresh, b'select 3') == b'select 3'


def test_units_restart_a_killed_daemon_after_their_restart_sec(tmp_path):
    for unit in sorted(os.listdir(UNIT_DIR)):
        assert process.unit_restart_delay(os.path.join(UNIT_DIR, unit)) == 2.0, unit
    never = tmp_path / 'never.service'
    never.write_text('[Service]\nExecStart=/bin/true\n')
    with pytest.raises(ValueError, match='does not restart'):
        process.unit_restart_delay(str(never))
    default = tmp_path / 'default.service'
    default.write_text('[Service]\nRestart=always\n# RestartSec=9\n')
    assert process.unit_restart_delay(str(default)) == 0.1
