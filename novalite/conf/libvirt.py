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
    cfg.ListOpt('hw_machine_type',
                help='Default machine type of new guests, per guest architecture, as '
                     'arch=machine_type (e.g. x86_64=q35,aarch64=virt). An image\'s '
                     'hw_machine_type property wins over it; without either, novalite '
                     'takes Nova\'s default for the architecture (pc for x86_64 and '
                     'i686, virt for aarch64 and armv7, s390-ccw-virtio for s390x), else '
                     'the first machine type libvirt lists for it. The type chosen is '
                     'recorded in the instance (image_hw_machine_type in its system '
                     'metadata) at its first spawn and kept from then on, so that '
                     'changing this option does not change existing guests; '
                     '"novalite-manage libvirt update_machine_type" changes it.'),
]

# Volumes (Cinder): as Nova's options of the same names.
volume_opts = [
    cfg.StrOpt('rbd_user',
               help='The Ceph user (without "client.") that guests open RBD volumes as, '
                    'when the volume\'s connection info names none (Cinder without '
                    'rbd_user, or with cephx authentication but no rbd_secret_uuid). '
                    'What Cinder sends takes precedence.'),
    cfg.StrOpt('rbd_secret_uuid',
               help='UUID of the libvirt secret (usage type ceph) holding the key of '
                    'rbd_user, for the same cases as rbd_user. The deployer defines the '
                    'secret on each compute host (virsh secret-define and '
                    'secret-set-value), as for Nova.'),
    cfg.BoolOpt('volume_use_multipath', default=False,
                help='Whether the host\'s volume connector asks Cinder for multipath '
                     'connections (iSCSI and FC backends; RBD has no paths).'),
    cfg.IntOpt('device_detach_attempts', default=8, min=1,
               help='How many times a volume\'s disk is asked to leave a running guest '
                    'before the detach fails (DeviceDetachFailed).'),
    cfg.IntOpt('device_detach_timeout', default=20, min=0,
               help='Seconds each request waits for the guest to release the disk '
                    '(libvirt\'s device-removed event) before asking again.'),
]

# Live migration: as Nova's options of the same names.
migration_opts = [
    cfg.StrOpt('live_migration_scheme',
               help='Scheme of the URI the source\'s libvirtd opens to the destination\'s '
                    '(peer to peer): qemu+<scheme>://<address>/system, the address being '
                    'the destination\'s live_migration_inbound_addr, else its host name. '
                    'Empty means tcp. Ignored when live_migration_uri is set.'),
    cfg.StrOpt('live_migration_uri',
               help='The destination\'s libvirt URI as a template: "%s" stands for the '
                    'destination\'s live_migration_inbound_addr, else its host name (for '
                    'example qemu+ssh://nova@%s/system, or a local socket per host: '
                    'qemu+unix:///system?socket=/srv/libvirt/%s/libvirt-sock). Empty: '
                    'from live_migration_scheme.'),
    cfg.HostAddressOpt('live_migration_inbound_addr',
                       help='Address of this host that the other hosts\' live migrations '
                            'reach it at: their libvirtd (the URI above) and QEMU\'s '
                            'memory and disk streams (tcp://<address>). Empty: this '
                            'host\'s name, which libvirt resolves.'),
    cfg.IntOpt('live_migration_bandwidth', default=0, min=0,
               help='Maximum bandwidth of a live migration\'s memory stream, in MiB/s. '
                    '0: unlimited (QEMU\'s own default).'),
    cfg.IntOpt('live_migration_downtime', default=500, min=100,
               help='Maximum time, in milliseconds, a guest may stay paused at the end of '
                    'a live migration while the last of its memory is copied: the value '
                    'the downtime steps reach.'),
    cfg.IntOpt('live_migration_downtime_steps', default=10, min=3,
               help='Number of increases of the allowed downtime, from '
                    'live_migration_downtime / steps up to live_migration_downtime.'),
    cfg.IntOpt('live_migration_downtime_delay', default=75, min=3,
               help='Seconds between two downtime increases, per GiB of data to copy '
                    '(memory, and disks in a block migration; at least 2 GiB each).'),
    cfg.IntOpt('live_migration_completion_timeout', default=800, min=0,
               help='Seconds a live migration may take per GiB of data to copy (memory, '
                    'and disks in a block migration; at least 2 GiB each) before '
                    'live_migration_timeout_action is taken. 0: no limit.'),
    cfg.StrOpt('live_migration_timeout_action', default='abort',
               choices=[('abort', 'cancel the migration: the guest stays on the source'),
                        ('force_complete', 'pause the guest so that the copy converges, '
                                           'as a forced completion does')],
               help='What a live migration past live_migration_completion_timeout does.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)
    conf.register_group(libvirt_group)
    conf.register_opts(opts + volume_opts + migration_opts, group=libvirt_group)


def list_opts() -> dict:
    return {'DEFAULT': default_opts, libvirt_group: opts + volume_opts + migration_opts}
