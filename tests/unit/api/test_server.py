"""The threading backend's HTTP/1.1 server: kept connections, and when it closes them."""
from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest

from novalite.api import server as http_server


def _app(environ, start_response):
    path = environ['PATH_INFO']
    if path == '/stream':
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return iter([b'a', b'b'])  # no length known: the connection must end the body
    if path == '/crash':
        raise RuntimeError('boom')
    if path == '/echo':
        body = environ['wsgi.input'].read(int(environ.get('CONTENT_LENGTH') or 0))
    else:
        body = b'%s %s' % (environ['REQUEST_METHOD'].encode(), path.encode())
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(body)))])
    return [body]


@pytest.fixture
def server():
    srv = http_server.ThreadedServer(_app, '127.0.0.1', 0)
    srv.start()
    yield srv
    srv.stop()
    srv.wait()


def _connection(server):
    return http.client.HTTPConnection(*server.address, timeout=10)


def _local_port(conn):
    return conn.sock.getsockname()[1]


def test_requests_share_one_connection(server):
    conn = _connection(server)
    conn.request('GET', '/one')
    first = conn.getresponse()
    assert (first.status, first.read(), first.version) == (200, b'GET /one', 11)
    port = _local_port(conn)
    conn.request('GET', '/two')
    assert conn.getresponse().read() == b'GET /two'
    assert _local_port(conn) == port  # http.client reconnects if the server closed


def test_unread_body_is_skipped_before_the_next_request(server):
    conn = _connection(server)
    conn.request('POST', '/ignores-body', body=b'x' * 5000)
    assert conn.getresponse().read() == b'POST /ignores-body'
    port = _local_port(conn)
    conn.request('POST', '/echo', body=b'hello')
    assert conn.getresponse().read() == b'hello'
    assert _local_port(conn) == port


def test_connection_close_is_honoured(server):
    conn = _connection(server)
    conn.request('GET', '/x', headers={'Connection': 'close'})
    resp = conn.getresponse()
    assert resp.getheader('Connection') == 'close'
    resp.read()
    assert resp.will_close


def test_a_body_without_length_ends_the_connection(server):
    conn = _connection(server)
    conn.request('GET', '/stream')
    resp = conn.getresponse()
    assert resp.getheader('Connection') == 'close'
    assert resp.read() == b'ab'


def test_a_failed_request_ends_the_connection(server):
    conn = _connection(server)
    conn.request('GET', '/crash')
    resp = conn.getresponse()
    assert resp.status == 500
    resp.read()
    assert resp.will_close


def test_http_10_clients_get_one_request_per_connection(server):
    with socket.create_connection(server.address, timeout=10) as sock:
        sock.sendall(b'GET /old HTTP/1.0\r\n\r\n')
        data = b''
        while chunk := sock.recv(4096):
            data += chunk
    assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'GET /old')


def test_stop_closes_idle_connections_at_once():
    srv = http_server.ThreadedServer(_app, '127.0.0.1', 0)
    srv.start()
    conn = _connection(srv)
    conn.request('GET', '/x')
    conn.getresponse().read()
    start = time.monotonic()
    stopper = threading.Thread(target=srv.stop)
    stopper.start()
    stopper.join(timeout=5)
    assert not stopper.is_alive()
    assert time.monotonic() - start < 2  # not the idle timeout
