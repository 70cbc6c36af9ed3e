"""Options of the [libvirt] group (the libvirt driver arrives in a later issue)."""
from __future__ import annotations

from oslo_config import cfg

libvirt_group = cfg.OptGroup('libvirt', title='Libvirt driver options')

opts = [
    cfg.StrOpt('virt_type', default='kvm', choices=['kvm', 'qemu', 'test'],
               help='Domain type to create: kvm, qemu (TCG) or test.'),
    cfg.StrOpt('connection_uri', default='',
               help='libvirt URI; empty means the default for virt_type.'),
    cfg.StrOpt('images_type', default='qcow2', choices=['qcow2', 'raw'],
               help='Instance disk format: a qcow2 overlay on the cached base, or raw.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(libvirt_group)
    conf.register_opts(opts, group=libvirt_group)


def list_opts() -> dict:
    return {libvirt_group: opts}
