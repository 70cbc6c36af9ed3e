"""novalite-novncproxy: the noVNC web client and the websocket proxy to guests' VNC
servers, behind the console URLs of ``openstack console url show --novnc``."""
from __future__ import annotations

import sys

from novalite import config, metrics, reports
from novalite.conf import CONF
from novalite.console import baseproxy

BINARY = 'novalite-novncproxy'


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    return baseproxy.serve(BINARY, CONF.vnc.novncproxy_host,
                           CONF.vnc.novncproxy_port, CONF.web)
