"""The all-in-one's HTTP servers (its API and Placement) on a loopback or chosen port.

They are the standalone API's threaded HTTP/1.1 server (``novalite.api.server``), so the
``[wsgi]`` timeouts bound their clients too: a client that stalls holds its own
connection's thread, never the server.
"""
from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterable
from typing import Any

from novalite.api import server as http_server

WSGIApp = Callable[[dict, Callable[..., Any]], Iterable[bytes]]


def _one_at_a_time(app: WSGIApp) -> WSGIApp:
    """``app`` run for one request at a time.

    The request body is read before the turn is taken, so that a client stalling in its
    body waits alone instead of holding every other request for its read timeout.
    """
    lock = threading.Lock()

    def serialized(environ: dict, start_response: Callable[..., Any]) -> list[bytes]:
        try:
            length = max(int(environ.get('CONTENT_LENGTH') or 0), 0)
        except ValueError:
            length = 0
        environ['wsgi.input'] = io.BytesIO(environ['wsgi.input'].read(length)
                                           if length else b'')
        with lock:
            result = app(environ, start_response)
            try:
                return list(result)
            finally:
                close = getattr(result, 'close', None)
                if close is not None:
                    close()

    return serialized


class WSGIServer:
    """Serve ``app`` on ``host:port`` (port 0: one the OS picks) until ``stop()``.

    The socket is bound at construction, so ``url`` is known before ``start()``.

    :param threaded: requests run in parallel; False runs ``app`` for one request at a
        time (connections are still served, and timed out, each in its thread).
    """

    def __init__(self, app: WSGIApp, host: str = '127.0.0.1', port: int = 0,
                 threaded: bool = True) -> None:
        self._server = http_server.ThreadedServer(app if threaded else _one_at_a_time(app),
                                                  host, port, drain=False)
        self.port: int = self._server.address[1]
        self.url = 'http://%s:%d' % (host, self.port)
        self._server.name = 'wsgi-%d' % self.port
        self._stopped = False

    def start(self) -> WSGIServer:
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop accepting requests and close the socket (idempotent)."""
        if not self._stopped:
            self._stopped = True
            self._server.stop()
