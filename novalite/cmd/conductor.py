"""novalite-conductor: builds instances and answers compute hosts' object calls."""
from __future__ import annotations

import sys

from novalite import config, service
from novalite.conductor import manager, rpcapi
from novalite.conf import CONF


def main() -> int:
    config.parse_args(sys.argv)
    svc = service.Service(CONF.host, 'novalite-conductor', rpcapi.RPC_TOPIC,
                          manager.ConductorManager(host=CONF.host))
    return service.launch([svc], workers=CONF.conductor.workers)
