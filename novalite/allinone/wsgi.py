"""The all-in-one's HTTP servers (its API and Placement) on a loopback or chosen port.

They are the standalone API's server (``novalite.api.server``: waitress), so the
``[wsgi]`` options bound their clients too: a client that stalls holds its own
connection, never a thread that runs requests.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from novalite.api import server as http_server
from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication


class WSGIServer:
    """Serve ``app`` on ``host:port`` (port 0: one the OS picks) until ``stop()``.

    The socket is bound at construction, so ``url`` is known before ``start()``.

    :param threaded: requests run in parallel (``[wsgi] threads`` of them); False runs
        ``app`` for one request at a time (connections are still read, and timed out,
        by the server's loop meanwhile).
    """

    def __init__(self, app: WSGIApplication, host: str = '127.0.0.1', port: int = 0,
                 threaded: bool = True) -> None:
        # No body limit in the server: it also serves the Glance doubles' image uploads;
        # the API's pipeline still refuses a body over its limit (sizelimit).
        settings = dataclasses.replace(http_server.Settings.from_conf(CONF),
                                       max_body=http_server.NO_BODY_LIMIT)
        if not threaded:
            settings = dataclasses.replace(settings, threads=1)
        self._server = http_server.Server(app, host, port, settings=settings, drain=False)
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
