"""The forwarder of 127.0.0.1's ports (``tests.devstack.harness.forward``), relaying within
this process's own namespace (joining another one needs root: the devstack test
``test_network_qemu`` runs it so)."""
from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.devstack.harness import forward


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    sock.listen(8)
    return sock


class Relay:
    """``forward.serve`` on a thread of its own, one listening socket per port."""

    def __init__(self, ports: list[int], ready_file: str) -> None:
        self.fronts = {port: _listener() for port in ports}
        self.ready_file = ready_file
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 5
        while not os.path.exists(ready_file):
            assert time.monotonic() < deadline, 'the ready file was never written'
            time.sleep(0.01)

    def _run(self) -> None:
        self.loop.run_until_complete(forward.serve(self.fronts, self.ready_file, self.stop))

    def front(self, port: int) -> int:
        """Where a client connects to reach ``port``."""
        return self.fronts[port].getsockname()[1]

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(5)
        assert not self.thread.is_alive()
        self.loop.close()


@pytest.fixture
def upstream() -> Iterator[int]:
    """The port of a server that answers each connection with what it got, upper-cased,
    once the client half-closed its side."""
    server = _listener()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b''
                while chunk := conn.recv(4096):
                    data += chunk
                conn.sendall(data.upper())
    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(('127.0.0.1', port), timeout=5) as client:
        client.sendall(data)
        client.shutdown(socket.SHUT_WR)
        got = b''
        while chunk := client.recv(4096):
            got += chunk
    return got


def test_connections_are_relayed_both_ways_with_the_half_close(upstream, tmp_path):
    relay = Relay([upstream], str(tmp_path / 'ready'))
    try:
        with open(relay.ready_file) as ready:
            assert ready.read().strip() == str(os.getpid())
        for text in (b'hello through the namespace', b'x' * 200000):
            assert _exchange(relay.front(upstream), text) == text.upper()
    finally:
        relay.close()


def test_a_refused_upstream_closes_the_client_connection(tmp_path):
    gone = _listener()
    port = gone.getsockname()[1]
    gone.close()  # nothing listens there any more
    relay = Relay([port], str(tmp_path / 'ready'))
    try:
        with socket.create_connection(('127.0.0.1', relay.front(port)), timeout=5) as client:
            try:
                assert client.recv(10) == b''
            except ConnectionResetError:
                pass
    finally:
        relay.close()
