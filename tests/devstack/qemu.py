"""The shared set-up of the devstack modules that boot REAL QEMU guests (TCG) on the
libvirt driver (``qemu:///system``): test_qemu, test_volumes_qemu and test_consoles.

``libvirt_host`` readies the machine before a module's stack starts (its compute
connects to libvirtd at start-up) and tidies it after: the QEMU packages checked, the
guest image built (``guest_image``), the instances directory made, libvirtd started if
none answers; at the end the module's domains, the directory and a libvirtd it started
go. ``upload_guest`` puts the guest's kernel, ramdisk and root image in Glance.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterable, Iterator

import libvirt
import pytest

from tests.devstack import clients, guest_image, libvirtd
from tests.devstack.harness import Stack


@contextlib.contextmanager
def libvirt_host(instances_path: str, made: list[str],
                 tmp_path_factory: pytest.TempPathFactory,
                 needs: Iterable[Callable[[], object]] = ()) -> Iterator[guest_image.GuestImage]:
    """The machine ready for a module's QEMU guests; yields the guest's files.

    ``instances_path`` is the compute's ``[DEFAULT] instances_path``: libvirt hands the
    instance's files to QEMU's unprivileged user, which must also pass through their
    directories, and pytest's temporary ones (the stack's) are private to root (made
    private again whenever another session starts), so it is a directory of its own,
    made here (0711) and removed at the end. ``made`` lists the servers the module
    booted: whatever of them libvirt still has at the end is destroyed and undefined.
    ``needs`` are the module's own checks (each skips or fails), run after the QEMU
    packages' check and before anything is made.
    """
    libvirtd.check_packages()
    for need in needs:
        need()
    try:
        image = guest_image.build()
    except (RuntimeError, OSError) as exc:
        libvirtd.unavailable('cannot build the guest image: %s' % exc)
    os.makedirs(instances_path)
    os.chmod(instances_path, 0o711)
    daemons = None
    if not libvirtd.reachable():
        daemons = libvirtd.Daemons(str(tmp_path_factory.mktemp('libvirtd')))
        daemons.start()
    try:
        yield image
    finally:
        remove_domains(made)
        shutil.rmtree(instances_path, ignore_errors=True)
        if daemons is not None:
            left = daemons.stop()
            assert not left, 'libvirt daemons did not stop: %s' % left


def remove_domains(uuids: Iterable[str]) -> list[str]:
    """Destroy and undefine the domains of ``uuids`` that still exist; returns them."""
    wanted = set(uuids)
    found = []
    conn = libvirt.open(libvirtd.URI)
    try:
        for domain in conn.listAllDomains(0):
            if domain.UUIDString() in wanted:
                found.append(domain.UUIDString())
                if domain.isActive():
                    domain.destroy()
                domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
    finally:
        conn.close()
    return found


def domain_uuids() -> set[str]:
    """The uuids of all the domains libvirt has, running or not."""
    conn = libvirt.open(libvirtd.URI)
    try:
        return {d.UUIDString() for d in conn.listAllDomains(0)}
    finally:
        conn.close()


def upload_guest(stack: Stack, image: guest_image.GuestImage, prefix: str,
                 cmdline: str | None = None) -> str:
    """The guest's kernel (``PREFIX-kernel``, AKI), ramdisk (``PREFIX-ramdisk``, ARI)
    and raw root image (``PREFIX-guest``, naming the two and the kernel's command line,
    ``cmdline`` or the image's own) in Glance; returns the root image's name."""
    kernel = clients.osc(stack, 'image', 'create', '--disk-format', 'aki',
                         '--container-format', 'aki', '--file', image.kernel,
                         prefix + '-kernel')
    ramdisk = clients.osc(stack, 'image', 'create', '--disk-format', 'ari',
                          '--container-format', 'ari', '--file', image.ramdisk,
                          prefix + '-ramdisk')
    name = prefix + '-guest'
    clients.osc(stack, 'image', 'create', '--disk-format', 'raw',
                '--container-format', 'bare', '--file', image.root,
                '--property', 'kernel_id=%s' % kernel['id'],
                '--property', 'ramdisk_id=%s' % ramdisk['id'],
                '--property', 'os_command_line=%s' % (cmdline or image.cmdline), name)
    return name
