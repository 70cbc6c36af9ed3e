"""The standalone API's HTTP server of the threading backend: wsgiref, kept alive.

wsgiref answers one request per connection in HTTP/1.0, so a client polling a server's
status paid, for every poll, a TCP connection, a new thread and the teardown of both,
on its side and on ours. This server speaks HTTP/1.1 and keeps the connection (and its
thread) for the client's next request, as eventlet's server of the classic nova-api did.

A connection is kept for at most ``MAX_REQUESTS`` requests, and only when that is safe:
the client did not ask to close it, the response carried a Content-Length, the request
body was read to its end (what the application left unread is skipped, up to
``MAX_DRAIN`` bytes) and nothing failed. On stop, connections not in a request are
closed at once and requests in progress finish.

A client cannot hold a thread for longer than the ``[wsgi]`` timeouts (``Timeouts``):
every read waits at most ``client_socket_timeout``; the request line and headers must
all arrive within ``client_header_timeout`` (a client trickling them a byte at a time
restarts the per-read wait with each byte, not this one); a kept connection may idle
``keep_alive_timeout`` between requests. A request whose head is not complete when
its time is up, or when the client closes, is dropped without an answer (there is no
request to answer); a body that ends or stalls before its Content-Length reaches the
application as a short body, and a failure of the application on it is the client's
400, never a 500.
"""
from __future__ import annotations

import dataclasses
import io
import json
import socket
import socketserver
import threading
import time
import urllib.parse
from types import TracebackType
from typing import Any, BinaryIO
from wsgiref import simple_server

from oslo_config import cfg
from oslo_log import log as logging

from novalite.api.openstack import faults
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

# A kept connection stays with the worker process that accepted it. Closing it after
# this many requests lets the client's next connection go to whichever worker accepts
# first, i.e. the least busy one: without a limit, one of two workers did 71 % of a
# 100-boot storm's work. A new connection costs the server about 0.3 ms of CPU.
MAX_REQUESTS = 25
MAX_DRAIN = 1 << 20
_MAX_LINE = 65536
_MAX_HEADERS = 100


@dataclasses.dataclass(frozen=True)
class Timeouts:
    """How long a client connection may keep the server waiting, in seconds (None:
    forever). ``from_conf`` reads them from the ``[wsgi]`` options."""

    read: float | None = 900.0
    """Any one read from the connection, or write to it."""
    head: float | None = 60.0
    """The whole request line and headers of one request."""
    idle: float | None = 60.0
    """A kept connection's wait for its next request."""
    keep_alive: bool = True

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> Timeouts:
        wsgi = conf.wsgi
        read = wsgi.client_socket_timeout or None
        idle = wsgi.keep_alive_timeout or None
        if read is not None and (idle is None or idle > read):
            idle = read
        return cls(read=read, head=wsgi.client_header_timeout or None, idle=idle,
                   keep_alive=wsgi.keep_alive)


class _Reader(io.RawIOBase):
    """The connection's raw reads, each bounded by ``timeout`` and, while a request
    head is read, all of them together by ``deadline`` (a ``time.monotonic`` value)."""

    def __init__(self, sock: socket.socket, raw: io.RawIOBase,
                 timeout: float | None) -> None:
        super().__init__()
        self._sock = sock
        self._raw = raw
        self.timeout = timeout
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        timeout = self.timeout
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError('the request head took too long')
            timeout = left if timeout is None else min(timeout, left)
        self._sock.settimeout(timeout)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Body:
    """``wsgi.input``: the request body, ``length`` bytes of the connection, never more
    (the next request's bytes follow it on a kept connection)."""

    def __init__(self, stream: BinaryIO, length: int) -> None:
        self._stream = stream
        self.left = length
        # The body ended (the client closed, or stopped sending for a read timeout)
        # before its Content-Length: the request is the client's fault, and the
        # connection's next bytes, if any, are not a request.
        self.cut = False

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self.left:
            size = self.left
        data = self._read(self._stream.read, size)
        if len(data) < size:
            self._cut()
        return data

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self.left:
            size = self.left
        data = self._read(self._stream.readline, size)
        if size and not data:
            self._cut()
        return data

    def _read(self, read: Any, size: int) -> bytes:
        if not size:
            return b''
        try:
            data = read(size)
        except OSError:
            # A timed out or reset connection: what the application gets is a short
            # body, which it refuses as it refuses any short body.
            data = b''
        self.left -= len(data)
        return data

    def _cut(self) -> None:
        self.left = 0
        self.cut = True

    def readlines(self, hint: int = -1) -> list[bytes]:
        return list(iter(self.readline, b''))

    def __iter__(self) -> Any:
        return iter(self.readline, b'')

    def drain(self) -> bool:
        """Skip what the application did not read; False if that is too much to skip."""
        if self.left > MAX_DRAIN:
            return False
        while self.left:
            if not self.read(min(self.left, 65536)):
                return False
        return True


def short_reads(app: Any) -> Any:
    """``app`` reading its request body through ``_Body``: a connection that times out or
    breaks in the middle of a body gives the application a short body, which the API
    refuses with a 400, instead of a socket error, which would be its 500. For servers
    other than this one (eventlet's); this one does it itself."""
    def guarded(environ: dict, start_response: Any) -> Any:
        try:
            length = int(environ.get('CONTENT_LENGTH') or 0)
        except ValueError:
            length = 0
        if length > 0:
            environ['wsgi.input'] = _Body(environ['wsgi.input'], length)
        return app(environ, start_response)
    return guarded


def _fault(code: int, message: str) -> bytes:
    """A fault body in the Compute API's format."""
    return json.dumps(faults.fault_body(code, message)).encode()


_SERVER_FAULT = _fault(500, 'The server has either erred or is incapable of performing '
                       'the requested operation.')
_SHORT_BODY = _fault(400, 'The request body ended before its Content-Length.')


class _Response(simple_server.ServerHandler):
    """One request's WSGI run, answered in HTTP/1.1."""

    http_version = '1.1'
    failed = False
    # wsgiref starts every environ from a copy of the process environment (CGI's
    # habit): a request is not made of the daemon's environment variables.
    os_environ: dict = {}
    # What escapes the application (the pipeline's fault wrapper catches nearly all)
    # is answered in the API's fault format too.
    error_status = '500 Internal Server Error'
    error_headers = [('Content-Type', 'application/json')]
    error_body = _SERVER_FAULT

    def cleanup_headers(self) -> None:
        super().cleanup_headers()
        handler = self.request_handler
        if self.failed or 'Content-Length' not in self.headers:
            # Without a length the body's end is the connection's end; after a failure
            # what the application left behind is unknown.
            handler.close_connection = True
        if handler.close_connection:
            self.headers['Connection'] = 'close'

    def handle_error(self) -> None:
        self.failed = True
        if getattr(self.stdin, 'cut', False):
            # The application failed on a body shorter than announced: the fault is
            # the client's, whatever the application made of the short body.
            self.error_status = '400 Bad Request'
            self.error_body = _SHORT_BODY
        super().handle_error()

    def log_exception(self, exc_info: tuple[type[BaseException], BaseException,
                                            TracebackType] | tuple[None, None, None]
                      ) -> None:
        method, path = self.environ.get('REQUEST_METHOD'), self.environ.get('PATH_INFO')
        if getattr(self.stdin, 'cut', False):
            LOG.info('%s %s: the request body ended before its Content-Length (%s)',
                     method, path, exc_info[1])
        elif isinstance(exc_info[1], OSError) and self.headers_sent:
            LOG.info('%s %s: the client went away during the response (%s)',
                     method, path, exc_info[1])
        else:
            LOG.error('%s %s failed', method, path, exc_info=exc_info)


class _Connection(simple_server.WSGIRequestHandler):
    """A client connection: its requests one after another, until it is closed."""

    protocol_version = 'HTTP/1.1'
    server: _Server

    def setup(self) -> None:
        super().setup()
        timeouts = self.server.timeouts
        self.accepted = time.monotonic()
        self.connection.settimeout(timeouts.read)
        # The buffered reader of the connection over a raw reader that applies the
        # timeouts to every read the buffer makes.
        self.reader = _Reader(self.connection, self.rfile.detach(), timeouts.read)
        self.rfile = io.BufferedReader(self.reader)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        # The requestlog filter of the pipeline logs every request already.
        pass

    def handle(self) -> None:
        server = self.server
        self.served = 0
        try:
            while True:
                server.track(self, idle=True)
                self._serve_one()
                if self.close_connection or server.stopping:
                    break
        finally:
            server.forget(self)

    def _serve_one(self) -> None:
        self.close_connection = True
        try:
            if not self._read_head():
                return
        except OSError:
            # Timed out (TimeoutError is an OSError), reset, or closed by stop().
            return
        self.server.track(self, idle=False)
        if self.server.stopping:
            # A request that came on a kept connection as the server stopped (Linux
            # still reads what arrived before, or after, close_idle's shutdown): not
            # started, the client sees the connection closed and retries elsewhere.
            return
        timeouts = self.server.timeouts
        self.reader.deadline = None
        self.connection.settimeout(timeouts.read)
        self.served += 1
        if self.served >= MAX_REQUESTS or not timeouts.keep_alive:
            self.close_connection = True
        environ = self.get_environ()
        chunked = 'chunked' in environ.get('HTTP_TRANSFER_ENCODING', '').lower()
        try:
            length = int(environ.get('CONTENT_LENGTH') or 0)
        except ValueError:
            length, chunked = 0, True
        body = self.rfile if chunked else _Body(self.rfile, max(length, 0))
        response = _Response(body, self.wfile, self.get_stderr(), environ,
                             multithread=True)
        response.request_handler = self
        try:
            response.run(self.server.get_app())
        except OSError as exc:
            # The error answer itself could not be written: the client is gone.
            LOG.info('%s %s: the client went away (%s)', self.command, self.path, exc)
            response.failed = True
        if (chunked or response.failed or getattr(body, 'cut', False)
                or not body.drain()):
            self.close_connection = True

    def _read_head(self) -> bool:
        """Wait for the next request and read its line and headers; False when there is
        none to answer (the client closed or was too slow, or an error was sent).

        The head's deadline runs from the connection's accept for its first request,
        and from the request's first byte on a kept connection, whose wait for that
        byte is its idle time.
        """
        timeouts, reader = self.server.timeouts, self.reader
        start = self.accepted
        if self.served:
            reader.timeout = timeouts.idle
            if not self.rfile.peek(1):
                return False
            reader.timeout = timeouts.read
            start = time.monotonic()
        reader.deadline = None if timeouts.head is None else start + timeouts.head
        self.raw_requestline = self.rfile.readline(_MAX_LINE + 1)
        if len(self.raw_requestline) > _MAX_LINE:
            self.requestline = self.request_version = self.command = ''
            self.send_error(414)
            return False
        if not self.raw_requestline.endswith(b'\n'):
            return False  # the connection ended inside the request line
        return self.parse_request()

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """Refuse a request the server cannot even parse, in the API's fault format
        (http.server's answer is an HTML page), and close the connection."""
        reason = self.responses.get(code, ('Error',))[0]
        body = _fault(code, message or reason)
        self.close_connection = True
        self.send_response(code, reason)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Connection', 'close')
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def parse_request(self) -> bool:
        """The request line and the header lines, or an error sent and False.

        http.server's own parse_request hands the headers to the email package's
        parser, which cost a status poll more CPU than its database queries (0.7 ms);
        an HTTP header is one "name: value" line, which is all this reads.
        """
        self.command = None
        # Errors about the request line still answer with a status line (not 0.9's).
        self.request_version = version = 'HTTP/1.0'
        self.requestline = line = str(self.raw_requestline, 'iso-8859-1').rstrip('\r\n')
        words = line.split()
        if len(words) != 3 or not words[2].startswith('HTTP/'):
            self.send_error(400, 'Bad request line')
            return False
        self.command, self.path, version = words
        try:
            major, minor = (int(part) for part in version[5:].split('.'))
        except ValueError:
            self.send_error(400, 'Bad request version (%r)' % version)
            return False
        if major != 1:
            self.send_error(505, 'Invalid HTTP version (%s)' % version)
            return False
        self.request_version = version
        headers: list[tuple[str, str]] = []
        while True:
            raw = self.rfile.readline(_MAX_LINE + 1)
            if len(raw) > _MAX_LINE or len(headers) > _MAX_HEADERS:
                self.send_error(431)
                return False
            if not raw.endswith(b'\n'):
                return False  # the connection ended before the head's end
            if raw in (b'\r\n', b'\n'):
                break
            text = str(raw, 'iso-8859-1')
            if text[0] in ' \t' and headers:
                # An obsolete folded line continues the header before it.
                name, value = headers[-1]
                headers[-1] = (name, value + ' ' + text.strip())
                continue
            name, colon, value = text.partition(':')
            if not colon or not name.strip():
                self.send_error(400, 'Bad header line')
                return False
            headers.append((name.strip(), value.strip()))
        self.header_list = headers
        connection = ','.join(v for n, v in headers if n.lower() == 'connection').lower()
        # HTTP/1.1 keeps the connection unless told to close it; 1.0 only when asked.
        self.close_connection = ('close' in connection if minor >= 1
                                 else 'keep-alive' not in connection)
        if minor >= 1 and any(n.lower() == 'expect' and v.lower() == '100-continue'
                              for n, v in headers):
            self.send_response_only(100)
            self.end_headers()
        return True

    def get_environ(self) -> dict:
        """The WSGI environ of the parsed request (wsgiref's, from our header list)."""
        environ = self.server.base_environ.copy()
        path, _, query = self.path.partition('?')
        environ.update({'SERVER_PROTOCOL': self.request_version,
                        'SERVER_SOFTWARE': self.server_version,
                        'REQUEST_METHOD': self.command,
                        'PATH_INFO': urllib.parse.unquote(path, 'iso-8859-1'),
                        'QUERY_STRING': query,
                        'REMOTE_ADDR': self.client_address[0],
                        # wsgiref's default, kept: the API answers a body without a
                        # type as it always did.
                        'CONTENT_TYPE': 'text/plain'})
        environ.pop('CONTENT_LENGTH', None)  # the base's empty one: only a real one counts
        typed = False
        for name, value in self.header_list:
            key = name.replace('-', '_').upper()
            if key == 'CONTENT_TYPE':
                if not typed:
                    environ[key], typed = value, True
                continue
            if key == 'CONTENT_LENGTH':
                if value:
                    environ.setdefault(key, value)
                continue
            key = 'HTTP_' + key
            environ[key] = environ[key] + ',' + value if key in environ else value
        return environ


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a burst of new clients would be reset
    # by the kernel.
    request_queue_size = socket.SOMAXCONN
    # Requests in progress are waited for on stop (server_close joins them).
    daemon_threads = False
    block_on_close = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.stopping = False
        self.timeouts = Timeouts()
        self._lock = threading.Lock()
        self._connections: dict[_Connection, bool] = {}
        super().__init__(*args, **kwargs)

    def server_activate(self) -> None:
        super().server_activate()
        # Several worker processes accept on this socket: a worker that lost the race
        # for a connection must get EAGAIN, not block where shutdown() cannot reach it.
        self.socket.setblocking(False)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = self.socket.accept()
        conn.setblocking(True)
        # A response goes out as two writes (head, then body); with Nagle's algorithm
        # the body would wait for the client's delayed ACK of the head (40 ms) on a kept
        # connection.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def track(self, connection: _Connection, idle: bool) -> None:
        with self._lock:
            self._connections[connection] = idle
        if idle and self.stopping:
            _close_reading(connection)

    def forget(self, connection: _Connection) -> None:
        with self._lock:
            self._connections.pop(connection, None)

    def close_idle(self) -> None:
        """Stop serving kept connections: idle ones are closed now, busy ones after
        their request."""
        self.stopping = True
        with self._lock:
            idle = [conn for conn, is_idle in self._connections.items() if is_idle]
        for connection in idle:
            _close_reading(connection)


def _close_reading(connection: _Connection) -> None:
    # The thread waiting for the next request line reads the end of the stream.
    try:
        connection.connection.shutdown(socket.SHUT_RD)
    except OSError:
        pass


class ThreadedServer:
    """The server of the threading backend: a thread per client connection.

    :param timeouts: what bounds a client's waits; default: the ``[wsgi]`` options.
    :param drain: whether ``stop()`` waits for the requests in progress (the
        all-in-one's servers do not: their process is ending).
    :param name: the name of the thread that accepts connections.
    """

    def __init__(self, app: Any, host: str, port: int, timeouts: Timeouts | None = None,
                 drain: bool = True, name: str = 'osapi_compute') -> None:
        self._server = simple_server.make_server(host, port, app, server_class=_Server,
                                                 handler_class=_Connection)
        assert isinstance(self._server, _Server)
        self._server.timeouts = timeouts or Timeouts.from_conf(CONF)
        self._server.daemon_threads = not drain
        self._server.block_on_close = drain
        self.address: tuple[str, int] = self._server.server_address[:2]
        self.name = name
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        # shutdown() waits for the loop to notice it, at most one poll interval.
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={'poll_interval': 0.1},
                                        name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
        self._server.close_idle()
        self._server.server_close()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
