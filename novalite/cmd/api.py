"""novalite-api: the standalone Compute API server (the paste app of api-paste.ini).

A threaded WSGI server under oslo.service's launcher (SIGTERM stops it gracefully).
For production behind uWSGI, gunicorn or mod_wsgi, serve
``novalite.wsgi.osapi_compute:application`` instead.
"""
from __future__ import annotations

import socketserver
import sys
import threading
from wsgiref import simple_server

from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import config
from novalite.api.openstack import loader
from novalite.conf import CONF

LOG = logging.getLogger(__name__)


class _Handler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        # The requestlog filter of the pipeline logs every request already.
        pass


class _ThreadingServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class WSGIService(os_service.Service):
    """Serve the API app on ``[api] osapi_compute_listen:osapi_compute_listen_port``."""

    def __init__(self) -> None:
        super().__init__()
        self.server = simple_server.make_server(
            CONF.api.osapi_compute_listen, CONF.api.osapi_compute_listen_port,
            loader.load_app(), server_class=_ThreadingServer, handler_class=_Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name='osapi_compute')

    def start(self) -> None:
        self._thread.start()
        LOG.info('novalite-api listening on %s:%s', *self.server.server_address[:2])

    def stop(self, graceful: bool = True) -> None:
        self.server.shutdown()
        self.server.server_close()
        super().stop(graceful=graceful)

    def wait(self) -> None:
        self._thread.join()


def main() -> None:
    config.parse_args(sys.argv)
    launcher = os_service.ServiceLauncher(CONF, restart_method='mutate')
    launcher.launch_service(WSGIService())
    launcher.wait()
