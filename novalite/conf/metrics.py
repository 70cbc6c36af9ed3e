"""Options of the [metrics] group: the Prometheus exporter of each daemon."""
from __future__ import annotations

from oslo_config import cfg

metrics_group = cfg.OptGroup(
    'metrics', title='Prometheus metrics',
    help='Each daemon can serve Prometheus metrics on an HTTP port of its own '
         '(docs/metrics.md lists them).')

# The port each daemon takes when [metrics] port is not set: daemons that share one
# configuration file on one host do not collide.
DEFAULT_PORTS = {
    'novalite-all': 9790,
    'novalite-api': 9791,
    'novalite-conductor': 9792,
    'novalite-scheduler': 9793,
    'novalite-compute': 9794,
    'novalite-novncproxy': 9795,
    'novalite-serialproxy': 9796,
}

opts: list[cfg.Opt] = [
    cfg.BoolOpt('enabled', default=False,
                help='Serve Prometheus metrics (GET /metrics) from this daemon. Off by '
                     'default: nothing is counted and no port is opened.'),
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address the metrics port listens on. The default keeps the '
                            'metrics on this host; set the management address (or '
                            '0.0.0.0) for a Prometheus server elsewhere to scrape them.'),
    cfg.PortOpt('port',
                help='Port of the metrics endpoint. Unset, each daemon takes its own: '
                     + ', '.join('%s %d' % item for item in DEFAULT_PORTS.items())
                     + '. Set it in a daemon\'s own configuration file when several '
                       'daemons share one file on one host. A daemon with worker '
                       'processes serves the sum of its workers on this one port.'),
    cfg.IntOpt('servers_cache_seconds', default=10, min=0,
               help='How long the API and conductor keep the servers-per-state counts '
                    '(novalite_servers) they read from every cell database for a '
                    'scrape, in seconds; 0 reads them at every scrape.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(metrics_group)
    conf.register_opts(opts, group=metrics_group)


def list_opts() -> dict:
    return {metrics_group: opts}
