"""Options of the [metrics] group: the Prometheus exporter of each daemon."""
from __future__ import annotations

from oslo_config import cfg

metrics_group = cfg.OptGroup('metrics', title='Prometheus metrics')

opts: list[cfg.Opt] = []


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(metrics_group)
    conf.register_opts(opts, group=metrics_group)


def list_opts() -> dict:
    return {metrics_group: opts}
