"""novalite-conductor: builds instances and answers compute hosts' object calls."""
from __future__ import annotations

import sys

from novalite import config, metrics, reports, service
from novalite.conductor import manager, rpcapi
from novalite.conf import CONF

BINARY = 'novalite-conductor'


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    svc = service.Service(CONF.host, BINARY, rpcapi.RPC_TOPIC,
                          manager.ConductorManager(host=CONF.host))
    return service.launch([svc], workers=CONF.conductor.workers)
