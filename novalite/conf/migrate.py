"""Options of resize and migrations ([DEFAULT], as in Nova)."""
from __future__ import annotations

from oslo_config import cfg

default_opts = [
    cfg.BoolOpt('allow_resize_to_same_host', default=False,
                help='Let the scheduler pick the server\'s own host as the destination of '
                     'a resize (useful with one compute host). Cold migration always '
                     'leaves the host.'),
    cfg.IntOpt('resize_confirm_window', default=0, min=0,
               help='Seconds after which a server waiting in VERIFY_RESIZE is confirmed '
                    'automatically by its destination host; 0 disables it.'),
    cfg.IntOpt('max_concurrent_live_migrations', default=1, min=0,
               help='Live migrations a compute host runs at once as their source; the '
                    'others wait (``queued``). 0 means no limit.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)


def list_opts() -> dict:
    return {'DEFAULT': default_opts}
