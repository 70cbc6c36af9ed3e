"""novalite-api: the standalone Compute API server (the paste app of api-paste.ini).

The listening socket is bound once, then ``[api] osapi_compute_workers`` worker
processes (default: one per CPU) serve it under oslo.service's launcher, as the classic
nova-api did. Each worker runs eventlet's WSGI server when ``[DEFAULT]
concurrency_backend = eventlet``, otherwise the threaded HTTP/1.1 server of
``novalite.api.server``. SIGTERM stops accepting and lets requests in progress
finish; SIGHUP re-reads mutable options and the policy. Behind uWSGI, gunicorn or
mod_wsgi, serve ``novalite.wsgi.osapi_compute:application`` instead.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from oslo_concurrency import processutils
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import concurrency, config, service
from novalite.api import server as threaded_server
from novalite.api.openstack import loader
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

# Seconds stop() waits for requests in progress (the launcher's own
# graceful_shutdown_timeout bounds the whole stop as well).
DRAIN_TIMEOUT = 30.0


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
        timeouts = threaded_server.Timeouts.from_conf(CONF)
        # eventlet waits ``keepalive`` seconds (when a number) for a request line, and
        # ``socket_timeout`` for any other read: it has no deadline for a whole head.
        keepalive = (timeouts.idle or True) if timeouts.keep_alive else False
        # log_output off: the requestlog filter of the pipeline logs every request.
        self._server = eventlet.spawn(eventlet.wsgi.server, self._socket,
                                      threaded_server.short_reads(self._app),
                                      custom_pool=self._pool, log_output=False, debug=False,
                                      keepalive=keepalive, socket_timeout=timeouts.read)

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
                        else threaded_server.ThreadedServer)
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
