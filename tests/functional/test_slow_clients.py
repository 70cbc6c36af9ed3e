"""Slow and stalled clients of the all-in-one's HTTP servers (issue 20, point 3).

A client that stops in the middle of its request head or body holds its own connection
until the ``[wsgi]`` timeouts end it, and nobody else's: the API and the in-process
Placement answer other clients meanwhile.
"""
from __future__ import annotations

import contextlib
import socket
import time
import urllib.parse

import pytest
import requests

from tests.functional.stack import Stack

TIMEOUT = 3  # [wsgi] client_socket_timeout and client_header_timeout, in seconds


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    stack = Stack(str(tmp_path_factory.mktemp('stack')), compute_hosts=('host1',),
                  overrides={('wsgi', 'client_socket_timeout'): TIMEOUT,
                             ('wsgi', 'client_header_timeout'): TIMEOUT})
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def _address(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


def _stalled(address: tuple[str, int], count: int, path: str) -> list[socket.socket]:
    """``count`` connections stopped half way: half in the request line, half in a body
    shorter than its Content-Length."""
    socks = []
    for i in range(count):
        sock = socket.create_connection(address, timeout=10)
        if i % 2:
            sock.sendall(b'GET %s HT' % path.encode())
        else:
            sock.sendall(b'POST %s HTTP/1.1\r\nHost: x\r\nX-Auth-Token: admin:admin\r\n'
                         b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n'
                         b'{"server": ' % path.encode())
        socks.append(sock)
    return socks


def _until_closed(sock: socket.socket, limit: float = 15.0) -> bytes:
    sock.settimeout(limit)
    received = b''
    while chunk := sock.recv(65536):
        received += chunk
    return received


@pytest.mark.parametrize('server', ['api', 'placement'])
def test_200_stalled_connections_do_not_stop_a_normal_request(stack, server):
    url = stack.api + '/servers' if server == 'api' else stack.placement.url + '/'
    address = _address(url)
    with contextlib.ExitStack() as cleanup:
        for sock in _stalled(address, 200, urllib.parse.urlsplit(url).path):
            cleanup.enter_context(sock)
        # Connections are accepted in order: once this one is answered, the server has
        # taken the 200 before it, and holds them while the next request is timed.
        requests.get(url, headers={'X-Auth-Token': 'admin:admin'}, timeout=10)
        start = time.monotonic()
        resp = requests.get(url, headers={'X-Auth-Token': 'admin:admin'}, timeout=10)
        elapsed = time.monotonic() - start
    assert resp.status_code == 200
    assert elapsed < 1.0, 'answered after %.1f s' % elapsed


@pytest.mark.parametrize('server', ['api', 'placement'])
def test_a_stalled_request_head_is_closed_after_the_timeout(stack, server):
    url = stack.api if server == 'api' else stack.placement.url
    with socket.create_connection(_address(url), timeout=10) as sock:
        sock.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n')
        assert _until_closed(sock) == b''


def _short_body(stack: Stack, half_close: bool) -> bytes:
    with socket.create_connection(_address(stack.api), timeout=10) as sock:
        sock.sendall(b'POST /v2.1/servers HTTP/1.1\r\nHost: x\r\n'
                     b'X-Auth-Token: admin:admin\r\nContent-Type: application/json\r\n'
                     b'Content-Length: 100\r\n\r\n{"server": ')
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return _until_closed(sock)


@pytest.mark.parametrize('half_close', [False, True], ids=['stalled', 'half-closed'])
def test_a_body_shorter_than_its_length_is_a_400_or_a_close(stack, half_close):
    answer = _short_body(stack, half_close)
    if answer:
        head, _, body = answer.partition(b'\r\n\r\n')
        assert head.startswith(b'HTTP/1.1 400 '), answer
        assert b'\r\nContent-Type: application/json' in head
        assert body.startswith(b'{"badRequest": {"code": 400, "message": ')
