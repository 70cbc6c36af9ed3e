"""novalite-all's console proxies: noVNC and serial, as threads of its own process.

The all-in-one's services talk over the in-memory ``fake://`` bus, which a connection
forked off (as the daemons novalite-novncproxy and novalite-serialproxy serve them)
would not reach, so both proxies run as ``InProcessProxy`` threads here. They listen on
127.0.0.1 only, as the all-in-one's API does: on ``[vnc] novncproxy_port`` and
``[serial_console] serialproxy_port`` (6080 and 6083 unless a config file says
otherwise) or, when that port is taken (another cloud on this machine), on one the OS
picks; the console URLs the API hands out name the ports actually bound.
"""
from __future__ import annotations

import errno
import os
import threading

from oslo_log import log as logging

from novalite import executor
from novalite.conf import CONF
from novalite.console.websocketproxy import InProcessProxy

LOG = logging.getLogger(__name__)

HOST = '127.0.0.1'
NOVNC_PAGE = 'vnc_lite.html'


class Consoles:
    """The two proxies; ``start()`` binds and serves, ``stop()`` ends both (idempotent).

    Read ``CONF`` (ports, web directory) once the stack is configured.
    """

    def __init__(self) -> None:
        self.novnc: InProcessProxy | None = None
        self.serial: InProcessProxy | None = None
        self.web: str | None = None
        # The proxies serving, each with its thread (shutdown() waits for a serving one).
        self._served: list[tuple[InProcessProxy, threading.Thread]] = []

    @staticmethod
    def _bind(binary: str, port: int, web: str | None) -> InProcessProxy:
        try:
            return InProcessProxy(binary, HOST, port, web)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or port == 0:
                raise
        LOG.warning('%s: port %d is in use; listening on a port the OS picks', binary, port)
        return InProcessProxy(binary, HOST, 0, web)

    def start(self) -> None:
        """Bind both proxies and serve them; their URLs go into ``CONF`` (the computes
        build the console URLs from ``[vnc] novncproxy_base_url`` and ``[serial_console]
        base_url``)."""
        # Debian's novnc package (tools/setup.sh); without it the websocket still serves
        # other web clients.
        self.web = CONF.web if os.path.isdir(CONF.web) else None
        if self.web is None:
            LOG.warning('No noVNC web client at [DEFAULT] web = %s: the noVNC proxy serves '
                        'its websocket only', CONF.web)
        try:
            self.novnc = self._bind('novalite-novncproxy', CONF.vnc.novncproxy_port, self.web)
            self.serial = self._bind('novalite-serialproxy',
                                     CONF.serial_console.serialproxy_port, None)
        except BaseException:
            self.stop()
            raise
        CONF.set_override('novncproxy_base_url', self.novnc_url, group='vnc')
        CONF.set_override('base_url', self.serial_url, group='serial_console')
        for proxy in (self.novnc, self.serial):
            self._served.append(
                (proxy, executor.start_thread(proxy.binary, proxy.serve_forever)))

    @property
    def novnc_url(self) -> str:
        """The noVNC page (``?path=%3Ftoken%3D...`` is added per console)."""
        assert self.novnc is not None
        return 'http://%s:%d/%s' % (HOST, self.novnc.server_address[1], NOVNC_PAGE)

    @property
    def serial_url(self) -> str:
        assert self.serial is not None
        return 'ws://%s:%d/' % (HOST, self.serial.server_address[1])

    def stop(self) -> None:
        """Stop listening; open console connections end with the process (daemon
        threads). Takes the URLs out of ``CONF``."""
        # Each shutdown waits for its loop's next poll (up to half a second): both at once.
        stopping = [executor.start_thread('stop-' + proxy.binary, proxy.shutdown)
                    for proxy, _thread in self._served]
        for thread in stopping + [thread for _proxy, thread in self._served]:
            thread.join()
        self._served.clear()
        for bound in (self.novnc, self.serial):
            if bound is not None:
                bound.server_close()
        self.novnc = self.serial = None
        CONF.clear_override('novncproxy_base_url', group='vnc')
        CONF.clear_override('base_url', group='serial_console')
