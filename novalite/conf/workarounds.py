"""Options of the [workarounds] group: switches for known problems of the environment."""
from __future__ import annotations

from oslo_config import cfg

workarounds_group = cfg.OptGroup('workarounds', title='Workarounds')

opts = [
    cfg.BoolOpt('disable_compute_service_check_for_ffu', default=False,
                help='Start services even if older compute services are registered.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(workarounds_group)
    conf.register_opts(opts, group=workarounds_group)


def list_opts() -> dict:
    return {workarounds_group: opts}
