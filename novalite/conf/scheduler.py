"""Options of the [scheduler] and [filter_scheduler] groups."""
from __future__ import annotations

from oslo_config import cfg

scheduler_group = cfg.OptGroup('scheduler', title='Scheduler options')
filter_group = cfg.OptGroup('filter_scheduler', title='Filter scheduler options')

scheduler_opts = [
    cfg.IntOpt('max_attempts', default=3, min=1,
               help='Hosts tried for one build: the selected host plus max_attempts - 1 '
                    'alternates from the same cell, used when a build fails on its host.'),
    cfg.IntOpt('max_placement_results', default=1000, min=1,
               help='Most allocation candidates asked from Placement per request.'),
    cfg.IntOpt('workers', min=1, help='Number of scheduler worker processes.'),
    cfg.IntOpt('discover_hosts_in_cells_interval', default=-1, min=-1,
               help='Seconds between automatic host discoveries; -1 disables.'),
]

filter_opts = [
    cfg.ListOpt('enabled_filters', default=['ComputeFilter', 'AvailabilityZoneFilter'],
                help='Filters applied, in this order, to the hosts Placement returned.'),
    cfg.ListOpt('weight_classes', default=['RAMWeigher', 'CPUWeigher', 'DiskWeigher'],
                help='Weighers whose weighed sum orders the hosts that passed the filters.'),
    cfg.FloatOpt('ram_weight_multiplier', default=1.0,
                 help='Multiplier of free RAM. Positive spreads, negative stacks.'),
    cfg.FloatOpt('cpu_weight_multiplier', default=1.0,
                 help='Multiplier of free vCPUs. Positive spreads, negative stacks.'),
    cfg.FloatOpt('disk_weight_multiplier', default=1.0,
                 help='Multiplier of free disk. Positive spreads, negative stacks.'),
    cfg.IntOpt('host_subset_size', default=1, min=1,
               help='Pick the host at random among this many best-weighed hosts.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)
    conf.register_group(filter_group)
    conf.register_opts(filter_opts, group=filter_group)


def list_opts() -> dict:
    return {scheduler_group: scheduler_opts, filter_group: filter_opts}
