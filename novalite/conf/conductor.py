"""Options of the [conductor] group."""
from __future__ import annotations

from oslo_config import cfg

conductor_group = cfg.OptGroup('conductor', title='Conductor options')

opts = [
    cfg.IntOpt('workers', min=1, help='Number of conductor worker processes.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(conductor_group)
    conf.register_opts(opts, group=conductor_group)


def list_opts() -> dict:
    return {conductor_group: opts}
