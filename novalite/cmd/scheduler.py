"""novalite-scheduler: picks hosts for instances, claiming in Placement."""
from __future__ import annotations

import sys

from novalite import config, service
from novalite.conf import CONF
from novalite.scheduler import manager, rpcapi


def main() -> int:
    config.parse_args(sys.argv)
    svc = service.Service(CONF.host, 'novalite-scheduler', rpcapi.RPC_TOPIC,
                          manager.SchedulerManager())
    return service.launch([svc], workers=CONF.scheduler.workers)
