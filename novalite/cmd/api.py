"""novalite-api: the standalone Compute API server (the paste app of api-paste.ini).

The listening socket is bound once, then ``[api] osapi_compute_workers`` worker
processes (default: one per CPU) serve it under oslo.service's launcher, as the classic
nova-api did. Each worker runs eventlet's WSGI server when ``[DEFAULT]
concurrency_backend = eventlet``, otherwise waitress (``novalite.api.server``), its
loop and ``[wsgi] threads`` threads in each worker. SIGTERM stops accepting, closes
idle connections and lets requests in progress finish; SIGHUP re-reads mutable options
and the policy (the workers and their sockets stay). Behind uWSGI, gunicorn or
mod_wsgi, serve ``novalite.wsgi.osapi_compute:application`` instead.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from oslo_concurrency import processutils
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import concurrency, config, metrics, reports, service
from novalite.api import server as http_server
from novalite.api.openstack import loader
from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

LOG = logging.getLogger(__name__)
BINARY = 'novalite-api'

# Seconds stop() waits for requests in progress (the launcher's own
# graceful_shutdown_timeout bounds the whole stop as well).
DRAIN_TIMEOUT = http_server.DRAIN_TIMEOUT


class _ShortReads:
    """``wsgi.input`` whose failed read is the end of the body: eventlet raises the
    socket's timeout or reset into the application's read, which would be its 500; a
    short body is the client's 400."""

    def __init__(self, stream: Any) -> None:  # eventlet's Input: untyped
        self._stream = stream

    def read(self, size: int | None = -1) -> bytes:
        try:
            return bytes(self._stream.read(size))
        except OSError:
            return b''

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return bytes(self._stream.readline(size))
        except OSError:
            return b''

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b'')


def short_reads(app: WSGIApplication) -> WSGIApplication:
    """``app`` reading its request body through ``_ShortReads``."""
    def guarded(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        environ['wsgi.input'] = _ShortReads(environ['wsgi.input'])
        return app(environ, start_response)
    return guarded


class _EventletServer:
    """``eventlet.wsgi`` with a pool of green threads: the server of the eventlet backend."""

    def __init__(self, app: WSGIApplication, host: str, port: int) -> None:
        import eventlet
        self._app = app
        self._socket = eventlet.listen((host, port), backlog=128, reuse_addr=True)
        self.address = self._socket.getsockname()[:2]
        self._pool: Any = None
        self._server: Any = None

    def start(self) -> None:
        import eventlet
        import eventlet.wsgi
        self._pool = eventlet.GreenPool(1000)
        wsgi = CONF.wsgi
        # eventlet waits ``keepalive`` seconds (when a number) for a request line, and
        # ``socket_timeout`` for any other read: it has no deadline for a whole head.
        idle = min((t for t in (wsgi.keep_alive_timeout, wsgi.client_socket_timeout) if t),
                   default=None)
        keepalive = (idle or True) if wsgi.keep_alive else False
        # log_output off: the requestlog filter of the pipeline logs every request.
        self._server = eventlet.spawn(eventlet.wsgi.server, self._socket,
                                      short_reads(self._app),
                                      custom_pool=self._pool, log_output=False, debug=False,
                                      keepalive=keepalive,
                                      socket_timeout=wsgi.client_socket_timeout or None)

    def stop(self) -> None:
        import eventlet
        if self._server is not None:
            self._server.kill()
        if self._pool is not None:
            with eventlet.Timeout(DRAIN_TIMEOUT, False):
                self._pool.waitall()
        self._socket.close()

    def wait(self) -> None:
        if self._server is not None:
            import greenlet
            try:
                self._server.wait()
            except greenlet.GreenletExit:
                pass


class WSGIService(os_service.Service):
    """Serve the API app on ``[api] osapi_compute_listen:osapi_compute_listen_port``.

    The socket is bound in ``__init__``, before the launcher forks the workers, so
    every worker accepts on the same socket.
    """

    def __init__(self, app: WSGIApplication | None = None) -> None:
        super().__init__()
        if app is None:
            app = loader.load_app()
            # Before the launcher forks the workers (see freeze_loaded_objects).
            loader.freeze_loaded_objects()
        server_class = (_EventletServer if concurrency.choose() == 'eventlet'
                        else http_server.Server)
        self.server = server_class(app, CONF.api.osapi_compute_listen,
                                   CONF.api.osapi_compute_listen_port)
        self._stopped = threading.Event()

    def start(self) -> None:
        self.server.start()
        LOG.info('novalite-api listening on %s:%s', *self.server.address)

    def stop(self, graceful: bool = True) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self.server.stop()
            LOG.info('novalite-api stopped')
        super().stop(graceful=graceful)

    def wait(self) -> None:
        self.server.wait()

    def reset(self) -> None:
        from novalite import policy
        policy.reset()
        LOG.info('novalite-api reloaded its configuration')


def workers() -> int:
    return CONF.api.osapi_compute_workers or processutils.get_worker_count()


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    return service.launch([WSGIService()], workers=workers())
