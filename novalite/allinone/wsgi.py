"""A threaded WSGI server on a loopback port, run from a thread of the all-in-one process."""
from __future__ import annotations

import socket
import socketserver
import threading
from typing import Any
from wsgiref import simple_server


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class name
        # The apps log their requests themselves (the API's requestlog filter).
        pass


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    # Not socketserver's backlog of 5: bursts of clients must queue, not be reset.
    request_queue_size = socket.SOMAXCONN


class WSGIServer:
    """Serve ``app`` on ``host:port`` (port 0: one the OS picks) until ``stop()``.

    The socket is bound at construction, so ``url`` is known before ``start()``.

    :param threaded: a thread per request; False serves one request at a time.
    """

    def __init__(self, app: Any, host: str = '127.0.0.1', port: int = 0,
                 threaded: bool = True) -> None:
        server_class = _ThreadingServer if threaded else simple_server.WSGIServer
        self._server = simple_server.make_server(host, port, app, server_class=server_class,
                                                 handler_class=_QuietHandler)
        self.port: int = self._server.server_port
        self.url = 'http://%s:%d' % (host, self.port)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={'poll_interval': 0.05}, daemon=True,
                                        name='wsgi-%d' % self.port)

    def start(self) -> WSGIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting requests and close the socket (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
