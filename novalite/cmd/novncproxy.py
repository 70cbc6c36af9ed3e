"""novalite-novncproxy: the noVNC web client and the websocket proxy to guests' VNC
servers, behind the console URLs of ``openstack console url show --novnc``."""
from __future__ import annotations

import sys

from novalite import config
from novalite.conf import CONF
from novalite.console import baseproxy


def main() -> int:
    config.parse_args(sys.argv)
    return baseproxy.serve('novalite-novncproxy', CONF.vnc.novncproxy_host,
                           CONF.vnc.novncproxy_port, CONF.web)
