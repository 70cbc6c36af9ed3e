"""Options of the [workarounds] group: switches for known problems of the environment."""
from __future__ import annotations

from oslo_config import cfg

workarounds_group = cfg.OptGroup('workarounds', title='Workarounds')

opts = [
    cfg.BoolOpt('disable_compute_service_check_for_ffu', default=False,
                help='Start services even if older compute services are registered.'),
    cfg.BoolOpt('destroy_unknown_guests', default=False,
                help='When novalite-compute starts, destroy the guests (and their disks) '
                     'that the hypervisor has and that belong to no instance of this host: '
                     'no instance record, a deleted instance, or an instance on another '
                     'host. Off: they are only reported in the log. Turn it on only where '
                     'no other tool defines guests on the hypervisor.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(workarounds_group)
    conf.register_opts(opts, group=workarounds_group)


def list_opts() -> dict:
    return {workarounds_group: opts}
