"""novalite-api: the standalone Compute API server (the paste app of api-paste.ini).

The listening socket is bound once, then ``[api] osapi_compute_workers`` worker
processes (default: one per CPU) serve it under oslo.service's launcher, as the classic
nova-api did. Each worker runs eventlet's WSGI server when ``[DEFAULT]
concurrency_backend = eventlet``, a threaded wsgiref server otherwise. SIGTERM stops
accepting and lets requests in progress finish; SIGHUP re-reads mutable options and the
policy. Behind uWSGI, gunicorn or mod_wsgi, serve ``novalite.wsgi.osapi_compute:application``
instead.
"""
from __future__ import annotations

import socket
import socketserver
import sys
import threading
from typing import Any
from wsgiref import simple_server

from oslo_concurrency import processutils
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import concurrency, config, service
from novalite.api.openstack import loader
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

# Seconds stop() waits for requests in progress (the launcher's own
# graceful_shutdown_timeout bounds the whole stop as well).
DRAIN_TIMEOUT = 30.0


class _Handler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        # The requestlog filter of the pipeline logs every request already.
        pass


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a burst of clients (each request is a
    # connection of its own with wsgiref) would be reset by the kernel.
    request_queue_size = socket.SOMAXCONN
    # Requests in progress are waited for on stop (server_close joins them).
    daemon_threads = False
    block_on_close = True

    def server_activate(self) -> None:
        super().server_activate()
        # Several worker processes accept on this socket: a worker that lost the race
        # for a connection must get EAGAIN, not block where shutdown() cannot reach it.
        self.socket.setblocking(False)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = self.socket.accept()
        conn.setblocking(True)
        return conn, addr


class _ThreadedServer:
    """wsgiref with a thread per request: the server of the threading backend."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        self._server = simple_server.make_server(host, port, app,
                                                 server_class=_ThreadingServer,
                                                 handler_class=_Handler)
        self.address = self._server.server_address[:2]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        # shutdown() waits for the loop to notice it, at most one poll interval.
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={'poll_interval': 0.1},
                                        name='osapi_compute', daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()


class _EventletServer:
    """``eventlet.wsgi`` with a pool of green threads: the server of the eventlet backend."""

    def __init__(self, app: Any, host: str, port: int) -> None:
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
        # log_output off: the requestlog filter of the pipeline logs every request.
        self._server = eventlet.spawn(eventlet.wsgi.server, self._socket, self._app,
                                      custom_pool=self._pool, log_output=False, debug=False)

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

    def __init__(self, app: Any = None) -> None:
        super().__init__()
        if app is None:
            app = loader.load_app()
            # Before the launcher forks the workers (see freeze_loaded_objects).
            loader.freeze_loaded_objects()
        server_class = (_EventletServer if concurrency.choose() == 'eventlet'
                        else _ThreadedServer)
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


def workers() -> int:
    return CONF.api.osapi_compute_workers or processutils.get_worker_count()


def main() -> int:
    config.parse_args(sys.argv)
    return service.launch([WSGIService()], workers=workers())
