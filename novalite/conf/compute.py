"""Options of the compute host: the driver, allocation ratios and reservations.

As in Nova, the driver and the ratios live in [DEFAULT]; host-side tuning in [compute].
"""
from __future__ import annotations

from oslo_config import cfg

compute_group = cfg.OptGroup('compute', title='Compute host options')

default_opts = [
    cfg.StrOpt('compute_driver', default='fake',
               help='The virt driver, by entry point name in novalite.compute.drivers: '
                    '"fake" (in memory) or "libvirt.LibvirtDriver".'),
    cfg.FloatOpt('cpu_allocation_ratio', default=None, min=0.0,
                 help='Virtual CPUs per physical CPU reported to Placement. Default: '
                      'initial_cpu_allocation_ratio when the provider is created.'),
    cfg.FloatOpt('ram_allocation_ratio', default=None, min=0.0,
                 help='Virtual RAM per physical RAM reported to Placement.'),
    cfg.FloatOpt('disk_allocation_ratio', default=None, min=0.0,
                 help='Virtual disk per physical disk reported to Placement.'),
    cfg.FloatOpt('initial_cpu_allocation_ratio', default=4.0, min=0.0,
                 help='CPU allocation ratio when cpu_allocation_ratio is unset.'),
    cfg.FloatOpt('initial_ram_allocation_ratio', default=1.0, min=0.0,
                 help='RAM allocation ratio when ram_allocation_ratio is unset.'),
    cfg.FloatOpt('initial_disk_allocation_ratio', default=1.0, min=0.0,
                 help='Disk allocation ratio when disk_allocation_ratio is unset.'),
    cfg.IntOpt('reserved_host_cpus', default=0, min=0,
               help='Physical CPUs kept for the host, reported as reserved VCPU.'),
    cfg.IntOpt('reserved_host_memory_mb', default=512, min=0,
               help='MiB of memory kept for the host, reported as reserved MEMORY_MB.'),
    cfg.IntOpt('reserved_host_disk_mb', default=0, min=0,
               help='MiB of disk kept for the host, reported as reserved DISK_GB '
                    '(rounded up to whole GiB).'),
    cfg.IntOpt('update_resources_interval', default=0,
               help='Seconds between runs of update_available_resource; 0 means every '
                    'periodic_interval.'),
    cfg.IntOpt('reclaim_instance_interval', default=0,
               help='Seconds a deleted server is kept SOFT_DELETED (its guest powered '
                    'off, its resources still allocated) before the compute host deletes '
                    'it for good; until then the owner may restore it. 0 or less: DELETE '
                    'deletes at once.'),
    cfg.IntOpt('block_device_allocate_retries', default=60, min=0,
               help='How many times a compute host checks whether a volume it asked '
                    'Cinder to make for a server (from an image, a snapshot or blank) is '
                    'available before the build fails.'),
    cfg.IntOpt('block_device_allocate_retries_interval', default=3, min=0,
               help='Seconds between two of those checks.'),
    cfg.IntOpt('reimage_timeout_per_gb', default=20, min=1,
               help='Seconds per GiB of the image that a compute host waits for Cinder '
                    'to report (the volume-reimaged event) that it re-imaged the root '
                    'volume of a volume-backed server being rebuilt (API 2.93); the '
                    'rebuild fails, the server in ERROR, when the event does not come '
                    'in time.'),
]

compute_opts = [
    cfg.IntOpt('sync_power_state_interval', default=600,
               help='Seconds between two runs of sync_power_states, which aligns the '
                    'recorded power state of instances with their guests; a negative '
                    'value disables it.'),
    cfg.IntOpt('build_timeout', default=0, min=0,
               help='Seconds a build may take before it fails; 0 disables.'),
    cfg.IntOpt('pending_delete_interval', default=60,
               help='Seconds between two runs of the task that finishes the deletes of '
                    'this host\'s instances left DELETING because Placement, the '
                    'message bus or the database failed for longer than the delete\'s '
                    'own retries (about 15 seconds). Until the delete finishes, the '
                    'server keeps its record and its allocation, so that a server that '
                    'answers 404 holds no resources. 0 or less disables the task.'),
    cfg.IntOpt('pending_delete_grace', default=30, min=0,
               help='Seconds an instance must have been DELETING, with no delete '
                    'running on it on this host, before the pending delete task runs its '
                    'delete again (a delete request may still be on its way to this '
                    'host).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)
    conf.register_group(compute_group)
    conf.register_opts(compute_opts, group=compute_group)


def list_opts() -> dict:
    return {'DEFAULT': default_opts, compute_group: compute_opts}
