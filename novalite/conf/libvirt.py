"""Options of the libvirt driver: the [libvirt] group and, as in Nova, the instance
directory and image cache options of [DEFAULT]."""
from __future__ import annotations

from oslo_config import cfg

libvirt_group = cfg.OptGroup('libvirt', title='Libvirt driver options')

default_opts = [
    cfg.StrOpt('instances_path', default='$state_path/instances',
               sample_default='$state_path/instances',
               help='Directory holding one sub-directory per instance (disks, console '
                    'log) and the image cache.'),
    cfg.StrOpt('image_cache_subdirectory_name', default='_base',
               help='Name of the image cache directory under instances_path: one file '
                    'per Glance image, downloaded once per host.'),
    cfg.IntOpt('shutdown_timeout', default=60, min=0,
               help='Seconds a guest gets to shut down cleanly (ACPI) when it is powered '
                    'off, before it is destroyed.'),
]

opts = [
    cfg.StrOpt('virt_type', default='kvm', choices=['kvm', 'qemu', 'test'],
               help='Domain type to create: kvm, qemu (TCG, no hardware acceleration) or '
                    'test (libvirt\'s in-process test driver, for tests).'),
    cfg.StrOpt('connection_uri', default='',
               help='libvirt URI. Empty means the default for virt_type: '
                    'qemu:///system for kvm and qemu, test:///default for test. A '
                    'simulated host of its own: test:///<absolute path to a node XML>.'),
    cfg.StrOpt('images_type', default='qcow2', choices=['qcow2', 'raw'],
               help='Instance root disk: a qcow2 overlay on the cached base image, or a '
                    'raw copy of it.'),
    cfg.IntOpt('wait_soft_reboot_seconds', default=120, min=0,
               help='Seconds a soft reboot waits for the guest to shut down before it '
                    'falls back to a hard reboot.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)
    conf.register_group(libvirt_group)
    conf.register_opts(opts, group=libvirt_group)


def list_opts() -> dict:
    return {'DEFAULT': default_opts, libvirt_group: opts}
