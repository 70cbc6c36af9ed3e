"""novalite's HTTP server (waitress underneath): kept connections, when it closes them,
the faults it answers itself, slow clients and the graceful stop."""
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
    if path == '/slow':
        time.sleep(float(environ['QUERY_STRING'] or 0.5))
    if path.startswith('/environ'):
        keys = ('REQUEST_METHOD', 'PATH_INFO', 'QUERY_STRING', 'CONTENT_TYPE',
                'CONTENT_LENGTH', 'HTTP_X_TWICE', 'HTTP_X_FOLDED', 'REMOTE_ADDR')
        body = repr({k: environ.get(k) for k in keys}).encode()
    elif path == '/echo':
        body = environ['wsgi.input'].read(int(environ.get('CONTENT_LENGTH') or 0))
    else:
        body = b'%s %s' % (environ['REQUEST_METHOD'].encode(), path.encode())
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(body)))])
    return [body]


@pytest.fixture
def server():
    srv = http_server.Server(_app, '127.0.0.1', 0)
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
    assert data.startswith(b'HTTP/1.0 200') and data.endswith(b'GET /old')


def test_stop_closes_idle_connections_at_once():
    srv = http_server.Server(_app, '127.0.0.1', 0)
    srv.start()
    conn = _connection(srv)
    conn.request('GET', '/x')
    conn.getresponse().read()
    stopper = threading.Thread(target=srv.stop)
    stopper.start()
    stopper.join(timeout=5)  # not the idle timeout (60 s)
    assert not stopper.is_alive()
    srv.wait()
    assert conn.sock.recv(1) == b''


def test_stop_lets_the_request_in_progress_finish():
    srv = http_server.Server(_app, '127.0.0.1', 0)
    srv.start()
    conn = _connection(srv)
    conn.request('GET', '/slow?0.5')
    time.sleep(0.1)  # the request is in the application
    stopper = threading.Thread(target=srv.stop)
    stopper.start()
    resp = conn.getresponse()
    assert (resp.status, resp.read()) == (200, b'GET /slow')
    stopper.join(timeout=10)
    assert not stopper.is_alive()
    srv.wait()
    assert conn.sock.recv(1) == b''  # and then closed
    with pytest.raises(OSError):
        socket.create_connection(srv.address, timeout=2).close()


def _raw(server, data):
    with socket.create_connection(server.address, timeout=10) as sock:
        sock.sendall(data)
        received = b''
        while chunk := sock.recv(4096):
            received += chunk
    return received


def test_the_environ_of_a_request(server):
    conn = _connection(server)
    conn.putrequest('GET', '/environ%20x?a=1&b=2')
    conn.putheader('X-Twice', 'one')
    conn.putheader('X-Twice', 'two')
    conn.endheaders()
    environ = eval(conn.getresponse().read())  # noqa: S307 - our own repr
    assert environ == {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/environ x',
                       'QUERY_STRING': 'a=1&b=2', 'CONTENT_TYPE': 'text/plain',
                       'CONTENT_LENGTH': None, 'HTTP_X_TWICE': 'one, two',
                       'HTTP_X_FOLDED': None, 'REMOTE_ADDR': '127.0.0.1'}


def test_a_folded_header_line_continues_the_one_before(server):
    answer = _raw(server, b'GET /environ HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n'
                          b' b\r\nConnection: close\r\n\r\n')
    assert b"'HTTP_X_FOLDED': 'a b'" in answer


@pytest.mark.parametrize('request_bytes, status', [
    (b'GET /x HTTP/1.1\r\nno colon here\r\n\r\n', b'400'),
    (b'GET /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n', b'501'),
])
def test_malformed_requests_are_refused(server, request_bytes, status):
    assert _raw(server, request_bytes).split(b' ', 2)[1] == status


def test_expect_100_continue_is_answered_before_the_body(server):
    with socket.create_connection(server.address, timeout=10) as sock:
        sock.sendall(b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n'
                     b'Expect: 100-continue\r\nConnection: close\r\n\r\n')
        assert sock.recv(4096).startswith(b'HTTP/1.1 100')
        sock.sendall(b'hello')
        received = b''
        while chunk := sock.recv(4096):
            received += chunk
    assert received.startswith(b'HTTP/1.1 200') and received.endswith(b'hello')


def test_a_connection_is_closed_after_its_last_allowed_request(server, monkeypatch):
    monkeypatch.setattr(http_server, 'MAX_REQUESTS', 2)
    conn = _connection(server)
    conn.request('GET', '/one')
    first = conn.getresponse()
    assert first.read() == b'GET /one' and not first.will_close
    conn.request('GET', '/two')
    second = conn.getresponse()
    assert second.getheader('Connection') == 'close' and second.will_close
    assert second.read() == b'GET /two'


def test_a_body_over_the_limit_is_a_413_fault_before_it_is_read():
    srv = http_server.Server(_app, '127.0.0.1', 0,
                             settings=http_server.Settings(max_body=100))
    srv.start()
    try:
        # Only the head is sent: the refusal does not wait for the body.
        answer = _raw(srv, b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n')
    finally:
        srv.stop()
    head, _, body = answer.partition(b'\r\n\r\n')
    assert head.startswith(b'HTTP/1.1 413 ')
    assert body == (b'{"overLimit": {"code": 413, "message": "Request is too large: '
                    b'larger than 100 bytes."}}')


# -- slow and broken clients (issue 20: read timeouts) ------------------------------------

_SHORT = http_server.Settings(timeout=1)


def _short_body_app(environ, start_response):
    length = int(environ.get('CONTENT_LENGTH') or 0)
    body = environ['wsgi.input'].read(length)
    start_response('200 OK', [('Content-Length', str(len(body)))])
    return [body]


@pytest.fixture
def quick_server():
    srv = http_server.Server(_short_body_app, '127.0.0.1', 0, settings=_SHORT)
    srv.start()
    yield srv
    srv.stop()
    srv.wait()


def _until_closed(sock, limit=10.0):
    """What the server sends until it closes the connection (within ``limit`` s)."""
    sock.settimeout(limit)
    received = b''
    while chunk := sock.recv(4096):
        received += chunk
    return received


@pytest.mark.parametrize('head', [b'', b'GET /x HT', b'GET /x HTTP/1.1\r\nHost: x\r\n'])
def test_a_stalled_request_head_is_dropped_after_its_timeout(quick_server, head):
    with socket.create_connection(quick_server.address) as sock:
        sock.sendall(head)
        assert _until_closed(sock) == b''  # no request: nothing to answer


def test_clients_trickling_their_heads_hold_no_thread():
    # One thread runs requests; two clients sending a byte at a time do not keep it
    # from a third client's request.
    settings = http_server.Settings(timeout=5, threads=1)
    srv = http_server.Server(_app, '127.0.0.1', 0, settings=settings)
    srv.start()
    try:
        slow = [socket.create_connection(srv.address) for _ in range(2)]
        for sock in slow:
            sock.sendall(b'GET /x HTTP/1.1\r\nX-Slow: ')
        for _ in range(3):
            for sock in slow:
                sock.sendall(b'X')
        conn = _connection(srv)
        conn.request('GET', '/quick')
        assert conn.getresponse().read() == b'GET /quick'
        for sock in slow:
            sock.close()
    finally:
        srv.stop()


def test_a_body_stalled_before_its_length_is_dropped_after_its_timeout(quick_server):
    with socket.create_connection(quick_server.address) as sock:
        sock.sendall(b'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort')
        assert _until_closed(sock) == b''  # the application never saw it


def test_a_short_body_then_a_half_close_is_the_clients_400(quick_server):
    with socket.create_connection(quick_server.address) as sock:
        sock.sendall(b'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort')
        sock.shutdown(socket.SHUT_WR)
        answer = _until_closed(sock)
    assert answer.startswith(b'HTTP/1.1 400 ')
    assert answer.endswith(b'{"badRequest": {"code": 400, "message": "The request body '
                           b'ended before its Content-Length."}}')


def test_the_head_ends_where_the_client_closes_it(quick_server):
    # Formerly the end of the stream ended the headers: a truncated request was run.
    with socket.create_connection(quick_server.address) as sock:
        sock.sendall(b'POST /x HTTP/1.1\r\nHost: x\r\n')
        sock.shutdown(socket.SHUT_WR)
        assert _until_closed(sock) == b''


def test_an_idle_kept_connection_is_closed_after_its_timeout(quick_server):
    conn = _connection(quick_server)
    conn.request('POST', '/x', body=b'hi')
    assert conn.getresponse().read() == b'hi'
    assert _until_closed(conn.sock) == b''


def test_a_failure_that_is_no_clients_fault_is_a_500_in_the_fault_format(server):
    conn = _connection(server)
    conn.request('GET', '/crash')
    resp = conn.getresponse()
    assert resp.getheader('Content-Type') == 'application/json'
    assert resp.read() == (b'{"computeFault": {"code": 500, "message": "The server has '
                           b'either erred or is incapable of performing the requested '
                           b'operation."}}')


def test_keep_alive_off_closes_after_each_response():
    srv = http_server.Server(_app, '127.0.0.1', 0,
                             settings=http_server.Settings(keep_alive=False))
    srv.start()
    try:
        conn = _connection(srv)
        conn.request('GET', '/x')
        resp = conn.getresponse()
        assert resp.getheader('Connection') == 'close'
        resp.read()
    finally:
        srv.stop()


def test_the_settings_come_from_the_wsgi_options():
    from oslo_config import cfg

    from novalite.conf import wsgi as wsgi_conf
    conf = cfg.ConfigOpts()
    wsgi_conf.register_opts(conf)
    conf([], default_config_files=[])
    assert http_server.Settings.from_conf(conf) == http_server.Settings(
        timeout=60, keep_alive=True, threads=16, connection_limit=1000, max_body=114688)
    conf.set_override('client_socket_timeout', 30, group='wsgi')
    conf.set_override('keep_alive_timeout', 0, group='wsgi')
    conf.set_override('client_header_timeout', 0, group='wsgi')
    conf.set_override('threads', 4, group='wsgi')
    conf.set_override('max_request_body_size', 1000, group='oslo_middleware')
    settings = http_server.Settings.from_conf(conf)
    assert (settings.timeout, settings.threads, settings.max_body) == (30, 4, 1000)
    adjustments = settings.adjustments()
    assert adjustments['channel_timeout'] == 30
    assert adjustments['cleanup_interval'] == 3  # the timeout is honoured within 10 %
    conf.set_override('client_socket_timeout', 0, group='wsgi')
    assert http_server.Settings.from_conf(conf).timeout == 0  # forever


def test_a_request_the_server_cannot_parse_is_refused_in_the_fault_format(server):
    answer = _raw(server, b'GET /x HTTP/1.1\r\nno colon here\r\n\r\n')
    head, _, body = answer.partition(b'\r\n\r\n')
    assert b'\r\nContent-Type: application/json' in head
    assert body == b'{"badRequest": {"code": 400, "message": "Invalid header"}}'


def test_short_reads_give_the_app_a_short_body_not_a_socket_error():
    # eventlet's server (the eventlet backend's) raises the socket's timeout into the
    # application's read.
    from novalite.cmd import api

    class _Stalled:
        def read(self, size=-1):
            raise TimeoutError('timed out')

    seen = []

    def app(environ, start_response):
        seen.append(environ['wsgi.input'].read(100))
        return []

    api.short_reads(app)({'CONTENT_LENGTH': '100', 'wsgi.input': _Stalled()}, None)
    assert seen == [b'']
