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
    cfg.ListOpt('enabled_filters',
                default=['ComputeFilter', 'AvailabilityZoneFilter',
                         'ComputeCapabilitiesFilter', 'ImagePropertiesFilter',
                         'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter'],
                help='Filters applied, in this order, to the hosts Placement returned. '
                     'Possible values: the names of the novalite.scheduler.filters entry '
                     'points (ComputeFilter, AvailabilityZoneFilter, '
                     'ComputeCapabilitiesFilter, ImagePropertiesFilter, '
                     'ServerGroupAffinityFilter, ServerGroupAntiAffinityFilter, '
                     'AggregateInstanceExtraSpecsFilter, '
                     'AggregateImagePropertiesIsolation, SameHostFilter, '
                     'DifferentHostFilter, NumInstancesFilter, IoOpsFilter).'),
    cfg.ListOpt('weight_classes',
                default=['RAMWeigher', 'CPUWeigher', 'DiskWeigher', 'NumInstancesWeigher',
                         'IoOpsWeigher', 'BuildFailureWeigher',
                         'ServerGroupSoftAffinityWeigher',
                         'ServerGroupSoftAntiAffinityWeigher'],
                help='Weighers whose weighed sum orders the hosts that passed the filters. '
                     'Each weigher scales its raw values to 0.0-1.0 across the hosts of '
                     'the request, then applies its multiplier. Possible values: the names '
                     'of the novalite.scheduler.weights entry points.'),
    cfg.FloatOpt('ram_weight_multiplier', default=1.0,
                 help='Multiplier of free RAM. Positive spreads, negative stacks. An '
                      'aggregate\'s metadata key of the same name overrides it for its '
                      'hosts (the smallest value wins when a host is in several).'),
    cfg.FloatOpt('cpu_weight_multiplier', default=1.0,
                 help='Multiplier of free vCPUs. Positive spreads, negative stacks. '
                      'Aggregate metadata may override it, as ram_weight_multiplier.'),
    cfg.FloatOpt('disk_weight_multiplier', default=1.0,
                 help='Multiplier of free disk. Positive spreads, negative stacks. '
                      'Aggregate metadata may override it, as ram_weight_multiplier.'),
    cfg.FloatOpt('num_instances_weight_multiplier', default=0.0,
                 help='Multiplier of the number of instances on a host. Positive prefers '
                      'hosts with more instances (stacks), negative prefers hosts with '
                      'fewer (spreads); 0.0 ignores it.'),
    cfg.FloatOpt('io_ops_weight_multiplier', default=-1.0,
                 help='Multiplier of the number of I/O-heavy operations (builds, resizes, '
                      'snapshots, ...) on a host. Negative prefers idle hosts, positive '
                      'busy ones.'),
    cfg.FloatOpt('build_failure_weight_multiplier', default=1000000.0,
                 help='Multiplier of the number of recent build failures on a host (the '
                      'compute node\'s failed_builds stat). Large by default so a host '
                      'failing every build is avoided over any other weigher; 0.0 '
                      'disables.'),
    cfg.FloatOpt('soft_affinity_weight_multiplier', default=1.0, min=0.0,
                 help='Multiplier for hosts with members of the soft-affinity server '
                      'group of the request: the more members, the more preferred.'),
    cfg.FloatOpt('soft_anti_affinity_weight_multiplier', default=1.0, min=0.0,
                 help='Multiplier for hosts with members of the soft-anti-affinity server '
                      'group of the request: the more members, the less preferred.'),
    cfg.IntOpt('host_subset_size', default=1, min=1,
               help='Pick the host at random among this many best-weighed hosts.'),
    cfg.IntOpt('max_instances_per_host', default=50, min=1,
               help='NumInstancesFilter: most instances one host may run.'),
    cfg.IntOpt('max_io_ops_per_host', default=8, min=0,
               help='IoOpsFilter: most concurrent I/O-heavy operations (builds, resizes, '
                    'snapshots, ...) one host may run.'),
    cfg.StrOpt('image_properties_default_architecture',
               help='ImagePropertiesFilter: the architecture assumed for images without '
                    'hw_architecture (e.g. x86_64); unset means no assumption.'),
    cfg.StrOpt('aggregate_image_properties_isolation_namespace',
               help='AggregateImagePropertiesIsolation: only aggregate metadata keys in '
                    'this namespace are compared with image properties; unset means all.'),
    cfg.StrOpt('aggregate_image_properties_isolation_separator', default='.',
               help='AggregateImagePropertiesIsolation: what separates the namespace '
                    'from the key.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)
    conf.register_group(filter_group)
    conf.register_opts(filter_opts, group=filter_group)


def list_opts() -> dict:
    return {scheduler_group: scheduler_opts, filter_group: filter_opts}
