"""novalite-compute: the host agent; reaches the database only through the conductor."""
from __future__ import annotations

import sys

from novalite import config, metrics, reports, service
from novalite.compute import manager, rpcapi
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.objects import base as obj_base

BINARY = 'novalite-compute'


def main() -> int:
    config.parse_args(sys.argv)
    reports.setup_autorun(BINARY, CONF)
    metrics.start_exporter(BINARY)
    # Every object call in this process goes to the conductor: compute has no DB access.
    # The service waits for a conductor to answer before its first one.
    obj_base.set_process_indirection_api(conductor_rpcapi.ConductorAPI())
    svc = service.Service(CONF.host, BINARY, rpcapi.RPC_TOPIC,
                          manager.ComputeManager(host=CONF.host))
    return service.launch([svc])
