"""Options of the [conductor] group."""
from __future__ import annotations

from oslo_config import cfg

conductor_group = cfg.OptGroup('conductor', title='Conductor options')

opts = [
    cfg.IntOpt('workers', min=1, help='Number of conductor worker processes.'),
    cfg.IntOpt('build_request_timeout', default=300, min=0,
               help='Seconds after which a server still waiting to be scheduled, or '
                    'created in a cell but never handed to a compute host, is considered '
                    'lost (a message the bus dropped) and put in ERROR with a fault. Must '
                    'be longer than a scheduling round trip (rpc_response_timeout_scheduler). '
                    '0 disables the check.'),
    cfg.IntOpt('lost_build_check_interval', default=30, min=1,
               help='Seconds between two checks for lost builds.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(conductor_group)
    conf.register_opts(opts, group=conductor_group)


def list_opts() -> dict:
    return {conductor_group: opts}
