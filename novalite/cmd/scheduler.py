"""novalite-scheduler: picks hosts for instances, claiming in Placement."""
from __future__ import annotations

import sys

from novalite import config, metrics, reports, service
from novalite.conf import CONF
from novalite.scheduler import manager, rpcapi

BINARY = 'novalite-scheduler'


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    svc = service.Service(CONF.host, BINARY, rpcapi.RPC_TOPIC,
                          manager.SchedulerManager())
    return service.launch([svc], workers=CONF.scheduler.workers)
