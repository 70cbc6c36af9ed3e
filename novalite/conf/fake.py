"""Options of the [fake_driver] group: the host the in-memory fake driver pretends to be."""
from __future__ import annotations

from oslo_config import cfg

fake_group = cfg.OptGroup('fake_driver', title='Fake virt driver options')

opts = [
    cfg.IntOpt('vcpus', default=8, min=1, help='Physical CPUs of the fake host.'),
    cfg.IntOpt('memory_mb', default=16384, min=1, help='MiB of memory of the fake host.'),
    cfg.IntOpt('local_gb', default=200, min=1, help='GiB of local disk of the fake host.'),
    cfg.FloatOpt('spawn_seconds', default=0.0, min=0.0,
                 help='Seconds spawn sleeps, to imitate a slow hypervisor in tests.'),
    cfg.ListOpt('fail_spawn_on_hosts', default=[],
                help='Hosts on which spawn raises a build failure (fault injection).'),
    cfg.FloatOpt('live_migration_mb_per_second', default=256.0, min=0.001,
                 help='MiB of guest memory a live migration copies per second: a guest '
                      'of N MiB takes N / this seconds to move (its root disk, in a '
                      'block migration, is copied over the same time), so a small value '
                      'leaves time to abort or force complete it.'),
    cfg.ListOpt('fail_live_migration_precheck_on_hosts', default=[],
                help='Hosts that refuse, in their destination pre-check, to take any '
                     'guest by live migration (fault injection).'),
    cfg.ListOpt('fail_live_migration_on_hosts', default=[],
                help='Destination hosts to which a live migration fails half-way, the '
                     'guest staying on the source (fault injection).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(fake_group)
    conf.register_opts(opts, group=fake_group)


def list_opts() -> dict:
    return {fake_group: opts}
