"""novalite's HTTP server: waitress, set from the ``[wsgi]`` options, with a graceful stop.

Why waitress: it reads each whole request, head and body, on its asyncore I/O loop and
hands only complete requests to a fixed pool of threads (``[wsgi] threads``). A client
that is slow, or stalls half way through its request ("slowloris", issue 20), holds a
connection until its timeout, never a worker thread; cheroot, and gunicorn's threaded
workers, hold a thread per such client. The socket is bound before oslo.service forks the
worker processes; each worker runs its own waitress loop and threads on it.

What this module adds to waitress: errors the server answers itself (a malformed or
oversized request, a failure escaping the application) in the Compute API's fault format;
a body that ends, the client closing its side, before its Content-Length is the client's
400 (a body that stalls is dropped at the timeout); a kept connection closed after
``MAX_REQUESTS`` requests; ``[wsgi] keep_alive`` = False; and ``stop()``, which closes idle
connections at once and lets the requests in progress finish.
"""
from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from oslo_config import cfg
from oslo_log import log as logging
from waitress import channel, server, task, utilities, wasyncore
from waitress.adjustments import Adjustments

from novalite import executor
from novalite.api.openstack import faults, sizelimit
from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication, WSGIEnvironment
    from waitress.parser import HTTPRequestParser

LOG = logging.getLogger(__name__)

# A kept connection stays with the worker process that accepted it. Closing it after
# this many requests lets the client's next connection go to whichever worker accepts
# first, i.e. the least busy one: without a limit, one of two workers did 71 % of a
# 100-boot storm's work.
MAX_REQUESTS = 25
# Seconds stop() waits for the requests in progress.
DRAIN_TIMEOUT = 30.0
_FOREVER = 10 ** 8
# Seconds stop() waits for waitress's loop to end after closing everything (its poll
# wakes at least every asyncore_loop_timeout, 1 s).
LOOP_END_TIMEOUT = 5.0
NO_BODY_LIMIT = 1 << 62  # none: waitress's default (1 GiB) refused a raw 1 GiB snapshot
_SERVER_FAULT = ('The server has either erred or is incapable of performing the '
                 'requested operation.')
_SHORT_BODY = 'The request body ended before its Content-Length.'


@dataclasses.dataclass(frozen=True)
class Settings:
    """The server's waitress settings; ``from_conf`` reads them from ``[wsgi]``."""

    timeout: int = 60
    """Seconds a connection may stay silent outside a running request (0: forever)."""
    keep_alive: bool = True
    threads: int = 16
    connection_limit: int = 1000
    max_body: int = 114688
    backlog: int = socket.SOMAXCONN

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> Settings:
        wsgi = conf.wsgi
        waits = [t for t in (wsgi.client_socket_timeout, wsgi.client_header_timeout,
                             wsgi.keep_alive_timeout) if t]
        return cls(timeout=min(waits, default=0), keep_alive=wsgi.keep_alive,
                   threads=wsgi.threads, connection_limit=wsgi.connection_limit,
                   max_body=sizelimit.max_body_size(conf))

    def adjustments(self) -> dict[str, int | bool]:
        timeout = self.timeout or _FOREVER
        return {'threads': self.threads, 'backlog': self.backlog,
                'channel_timeout': timeout,
                # Silent connections are looked for this often: a tenth of the timeout
                # late at most (waitress's default is every 30 s).
                'cleanup_interval': max(1, min(30, timeout // 10)),
                'connection_limit': self.connection_limit,
                'max_request_body_size': self.max_body,
                # select() stops at descriptor 1024.
                'asyncore_use_poll': True,
                # X-Forwarded-* reach the application as they always did.
                'clear_untrusted_proxy_headers': False,
                # A client that resets its connection is no server error (waitress
                # logs each with a traceback).
                'log_socket_errors': False}


class _Task(task.WSGITask):
    def get_environment(self) -> WSGIEnvironment:
        environ = super().get_environment()
        # wsgiref's default, kept: the API answers a body without a type as it always did.
        environ.setdefault('CONTENT_TYPE', 'text/plain')
        return environ

    def execute(self) -> None:
        conn = self.channel
        assert isinstance(conn, _Channel) and isinstance(conn.server, _Server)
        conn.served += 1
        if conn.served >= MAX_REQUESTS or not conn.server.keep_alive or conn.server.stopping:
            self.set_close_on_finish()
        super().execute()


class _ErrorTask(task.ErrorTask):
    """A request the server refuses, or a failure of the application, as a fault."""

    def execute(self) -> None:
        # waitress's stub types the request as its Error; it is the parsed request.
        error = cast('HTTPRequestParser', self.request).error
        assert error is not None
        if error.code >= 500:
            message = _SERVER_FAULT
        elif error.code == 413:
            message = sizelimit.too_large(self.channel.adj.max_request_body_size)
        else:
            message = str(error.body or error.reason)
        body = json.dumps(faults.fault_body(error.code, message)).encode()
        self.status = '%d %s' % (error.code, error.reason)
        self.response_headers = [*self.response_headers,
                                 ('Content-Type', 'application/json')]
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(channel.HTTPChannel):
    task_class = _Task
    error_task_class = _ErrorTask
    served = 0
    _cut = _cut_queued = False

    def handle_close(self) -> None:
        request = self.request
        if (self.connected and not (self._cut or self.will_close or self.close_when_flushed)
                and request is not None and request.headers_finished
                and not request.completed and not self.requests):
            # The client closed its side inside a body: its request is answered (400),
            # from handle_read, once waitress has marked the end of the stream.
            self._cut = True
            request.error = utilities.BadRequest(_SHORT_BODY)
            request.completed = True
            # No task runs (no request is queued), and only this thread queues one.
            self.request = None
            self.requests = [request]
            return
        super().handle_close()

    def handle_read(self) -> None:
        super().handle_read()
        if self._cut and not self._cut_queued:
            self._cut_queued = True
            self.connected = True  # half-closed: the answer can still be sent
            # waitress's stub says a Task: a channel is what waitress queues.
            self.server.add_task(self)  # type: ignore[arg-type]


class _Server(server.TcpWSGIServer):
    channel_class = _Channel
    keep_alive = True
    stopping = False
    closed = False
    _closing = threading.Lock()

    def pull_trigger(self) -> None:
        # A thread still finishing a request after stop() must not write to the closed
        # trigger's descriptor, which may already be another file's.
        with self._closing:
            if not self.closed:
                super().pull_trigger()

    def close_all(self, connections: dict[int, wasyncore.dispatcher]) -> None:
        """Close every connection, the trigger and the socket: the loop ends."""
        with self._closing:
            self.closed = True
        for conn in list(connections.values()):
            conn.close()
        connections.clear()


def _in_loop(srv: _Server, thunk: Callable[[], None]) -> None:
    """Run ``thunk`` in waitress's loop thread, as everything that touches its
    connections (its trigger wakes the loop and runs the thunk).

    When the trigger's pipe is no longer there to write to (seen once in a full test
    run, a server's stop finding its descriptor closed), the thunk runs on this thread:
    every thunk here is safe to run twice, should the loop still run it later."""
    try:
        srv.trigger.pull_trigger(thunk)  # type: ignore[attr-defined]  # the stub: an int
    except OSError as exc:
        LOG.warning('Could not wake the HTTP server loop (%s); acting from this thread',
                    exc)
        thunk()


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


class Server:
    """Serve ``app`` on ``host:port`` with waitress until ``stop()``.

    The socket is bound and listening at construction (``address`` is known, worker
    processes forked after it share it); waitress's loop and threads start in ``start()``.

    :param settings: default: the ``[wsgi]`` options.
    :param drain: whether ``stop()`` waits for the requests in progress (the
        all-in-one's servers do not: their process is ending).
    :param name: the name of the thread that runs waitress's loop.
    """

    def __init__(self, app: WSGIApplication, host: str, port: int,
                 settings: Settings | None = None, drain: bool = True,
                 name: str = 'osapi_compute') -> None:
        self.settings = settings or Settings.from_conf(CONF)
        self._app = app
        self._socket = _listen(host, port, self.settings.backlog)
        self.address: tuple[str, int] = self._socket.getsockname()[:2]
        self.name = name
        self._drain = drain
        self._map: dict[int, wasyncore.dispatcher] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        adj = Adjustments(sockets=[self._socket], **self.settings.adjustments())
        dispatcher = task.ThreadedTaskDispatcher()
        dispatcher.set_thread_count(adj.threads)
        sock = self._socket
        # waitress's stub types the socket map's values as sockets: they are dispatchers.
        self._server = _Server(self._app, map=self._map,  # type: ignore[arg-type]
                               _sock=sock, dispatcher=dispatcher,
                               adj=adj, bind_socket=False,
                               sockinfo=(sock.family, sock.type, sock.proto,
                                         sock.getsockname()))
        self._server.keep_alive = self.settings.keep_alive
        self._thread = executor.start_thread(self.name, self._server.run)

    def stop(self) -> None:
        """Stop accepting; close idle connections now, the others after their request."""
        srv = self._server
        if srv is None:
            self._socket.close()
            return
        srv.stopping = True
        _in_loop(srv, self._close_idle)
        deadline = time.monotonic() + (DRAIN_TIMEOUT if self._drain else 0)
        self._wait_idle(deadline)
        # The threads end after their request; then the loop sends what they wrote.
        srv.task_dispatcher.shutdown(timeout=max(int(deadline - time.monotonic()), 1))
        self._wait_idle(max(deadline, time.monotonic() + 0.5))
        _in_loop(srv, lambda: srv.close_all(self._map))
        # The loop ends once its map is empty: wait for it, so nothing of this server
        # is still closing when the caller goes on.
        if self._thread is not None:
            self._thread.join(LOOP_END_TIMEOUT)

    def _close_idle(self) -> None:
        assert self._server is not None
        self._server.accepting = False
        for conn in list(self._map.values()):
            if isinstance(conn, _Channel) and not conn.requests:
                conn.will_close = True

    def _wait_idle(self, deadline: float) -> None:
        """Until no connection has a request in progress or output unsent."""
        while time.monotonic() < deadline and any(
                isinstance(conn, _Channel) and (conn.requests or conn.total_outbufs_len)
                for conn in list(self._map.values())):
            time.sleep(0.02)

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
