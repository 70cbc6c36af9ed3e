"""novalite-serialproxy: the websocket proxy to guests' serial ports, behind the
console URLs of ``openstack console url show --serial`` (no web client)."""
from __future__ import annotations

import sys

from novalite import config
from novalite.conf import CONF
from novalite.console import baseproxy


def main() -> int:
    config.parse_args(sys.argv)
    return baseproxy.serve('novalite-serialproxy', CONF.serial_console.serialproxy_host,
                           CONF.serial_console.serialproxy_port, None)
