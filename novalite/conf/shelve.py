"""Options of shelving ([DEFAULT], as in Nova): when shelved servers leave their host."""
from __future__ import annotations

from oslo_config import cfg

default_opts = [
    cfg.IntOpt('shelved_offload_time', default=0, min=-1,
               help='Seconds a shelved server keeps its guest, disks and allocation on '
                    'its host before the compute offloads it (SHELVED_OFFLOADED). 0 '
                    'offloads at once, as part of the shelve; -1 never offloads '
                    'automatically (shelveOffload still does).'),
    cfg.IntOpt('shelved_poll_interval', default=3600,
               help='Seconds between two runs of the compute task that offloads shelved '
                    'servers older than shelved_offload_time; 0 or less disables it.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)


def list_opts() -> dict:
    return {'DEFAULT': default_opts}
