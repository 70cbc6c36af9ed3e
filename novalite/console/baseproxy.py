"""What the console proxy daemons share: check the files they need, then serve a
websockify proxy in the foreground until SIGTERM (websockify's own signal handling)."""
from __future__ import annotations

import multiprocessing
import os

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.console import websocketproxy

LOG = logging.getLogger(__name__)


class ProxyConfigError(Exception):
    """A file the proxy needs is missing (the daemon exits with this message)."""


def build(binary: str, host: str, port: int,
          web: str | None) -> websocketproxy.NovaliteWebSocketProxy:
    """The proxy ``binary`` serves, listening on ``host:port``; ``web`` is the directory
    of the web client it serves besides the websocket (None: websocket only).

    :raises ProxyConfigError: ``[DEFAULT] ssl_only`` without its certificate, or no
        ``web`` directory
    """
    if CONF.ssl_only and not os.path.exists(CONF.cert):
        raise ProxyConfigError('SSL only and %s not found' % CONF.cert)
    if web and not os.path.isdir(web):
        raise ProxyConfigError('Can not find html/js files at %s.' % web)
    return websocketproxy.NovaliteWebSocketProxy(
        binary=binary,
        listen_host=host, listen_port=port, source_is_ipv6=CONF.source_is_ipv6,
        cert=CONF.cert, key=CONF.key, ssl_only=CONF.ssl_only,
        ssl_ciphers=CONF.console.ssl_ciphers,
        ssl_minimum_version=CONF.console.ssl_minimum_version,
        web=web or '',
        # Files of ``web`` only, never a listing of its directories (as Nova).
        file_only=True,
        # Request lines too with debug (registered with oslo.log's options).
        verbose='debug' in CONF and CONF.debug)


def serve(binary: str, host: str, port: int, web: str | None) -> int:
    """Run the proxy until SIGTERM or SIGINT; the daemon's exit code."""
    try:
        proxy = build(binary, host, port, web)
    except ProxyConfigError as exc:
        LOG.error('%s cannot start: %s', binary, exc)
        return 1
    # websockify serves each connection in a forked process (the fork start method, which
    # Python 3.14 no longer makes the default on Linux).
    multiprocessing.set_start_method('fork', force=True)
    try:
        proxy.start_server()
    except SystemExit:
        # websockify exits (code 0) when it cannot listen: a failure to systemd.
        if not proxy.listening:
            LOG.error('%s cannot listen on %s:%s', binary, host, port)
            return 1
        raise
    except proxy.Terminate:
        # A SIGTERM that landed outside websockify's accept loop (between two of its
        # statements) ends the serving as well; it is still a clean stop.
        LOG.debug('%s: stop signal outside the accept loop', binary)
    _end_handlers(binary)
    LOG.info('%s stopped', binary)
    return 0


def _end_handlers(binary: str, grace: float = 5.0) -> None:
    """Wait ``grace`` seconds for the connection handlers websockify told to stop,
    then kill what is left: multiprocessing joins every child at exit, so one handler
    stuck in a socket would keep the daemon from ever exiting."""
    for child in multiprocessing.active_children():
        child.join(grace)
        if child.is_alive():
            LOG.warning('%s: killing connection handler %s, still there after %.0f s',
                        binary, child.pid, grace)
            child.kill()
            child.join()
