"""novalite-serialproxy: the websocket proxy to guests' serial ports, behind the
console URLs of ``openstack console url show --serial`` (no web client)."""
from __future__ import annotations

import sys

from novalite import config, metrics, reports
from novalite.conf import CONF
from novalite.console import baseproxy

BINARY = 'novalite-serialproxy'


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    return baseproxy.serve(BINARY, CONF.serial_console.serialproxy_host,
                           CONF.serial_console.serialproxy_port, None)
