"""A REAL QEMU guest (TCG) through the whole stack and openstackclient.

One compute runs the libvirt driver on ``qemu:///system``. The guest is Debian's cloud
kernel with a busybox initramfs (``guest_image``), uploaded to Glance as AKI/ARI images
that a raw root image names; it prints a marker on its serial console within seconds
and powers off on the ACPI power button. The test boots it, reads the marker through
``openstack console log show``, reboots it, stops and starts it, deletes it, and checks
that no domain, instance directory or allocation is left.

Needs root, libvirt-daemon-system, qemu-system-x86 and qemu-utils (tools/setup.sh), and
apt to fetch the guest's packages once; skips without them, fails under ``CI``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid

import libvirt
import pytest

from tests.devstack import clients, guest_image, libvirtd

HOST = 'qemu1'
# Seconds the guest gets to power off on the ACPI button: it does so in well under a
# second, so the hard fallbacks are never needed, but TCG on a busy machine is slow.
CLEAN_SHUTDOWN = 30
# libvirt hands the instance's files to QEMU's unprivileged user, which must also pass
# through their directories: pytest's temporary ones (the stack's) are private to root,
# and pytest makes them private again whenever another session starts. So the instances
# live in a directory of their own, which the module removes at the end.
INSTANCES_PATH = os.path.join(tempfile.gettempdir(), 'novalite-qemu-' + uuid.uuid4().hex[:8])
STACK = {
    'computes': (HOST,),
    'host_conf': {'compute-' + HOST: {
        'DEFAULT': {'compute_driver': 'libvirt.LibvirtDriver',
                    'shutdown_timeout': CLEAN_SHUTDOWN, 'instances_path': INSTANCES_PATH},
        'libvirt': {'virt_type': 'qemu', 'connection_uri': libvirtd.URI,
                    'wait_soft_reboot_seconds': CLEAN_SHUTDOWN}}},
}
BOOT_TIMEOUT = 120
POWER_OFF_LINE = 'power button: powering off'
# Servers this module made: whatever of them libvirt still has goes at the end.
_made: list[str] = []


@pytest.fixture(scope='module', autouse=True)
def libvirt_host(tmp_path_factory):
    """libvirtd on ``qemu:///system`` (started here if not running) and the guest's
    files; set up before the stack, whose compute connects at start-up."""
    libvirtd.check_packages()
    try:
        image = guest_image.build()
    except (RuntimeError, OSError) as exc:
        libvirtd.unavailable('cannot build the guest image: %s' % exc)
    os.makedirs(INSTANCES_PATH)
    os.chmod(INSTANCES_PATH, 0o711)
    daemons = None
    if not libvirtd.reachable():
        daemons = libvirtd.Daemons(str(tmp_path_factory.mktemp('libvirtd')))
        daemons.start()
    yield image
    _remove_domains(_made)
    shutil.rmtree(INSTANCES_PATH, ignore_errors=True)
    if daemons is not None:
        left = daemons.stop()
        assert not left, 'libvirt daemons did not stop: %s' % left


@pytest.fixture(scope='module')
def qemu_stack(stack):
    """The stack; its compute stops before the libvirtd it talks to does."""
    yield stack
    stack.stop('compute-' + HOST)


def _remove_domains(uuids: list[str]) -> list[str]:
    """Destroy and undefine the domains of ``uuids`` that still exist; returns them."""
    conn = libvirt.open(libvirtd.URI)
    found = []
    try:
        for domain in conn.listAllDomains(0):
            if domain.UUIDString() in uuids:
                found.append(domain.UUIDString())
                if domain.isActive():
                    domain.destroy()
                domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
    finally:
        conn.close()
    return found


def _domain_uuids() -> set[str]:
    conn = libvirt.open(libvirtd.URI)
    try:
        return {d.UUIDString() for d in conn.listAllDomains(0)}
    finally:
        conn.close()


def _upload(stack, image: guest_image.GuestImage) -> str:
    """The kernel, ramdisk and root images in Glance; returns the root image's name."""
    kernel = clients.osc(stack, 'image', 'create', '--disk-format', 'aki',
                         '--container-format', 'aki', '--file', image.kernel,
                         'qemu-guest-kernel')
    ramdisk = clients.osc(stack, 'image', 'create', '--disk-format', 'ari',
                          '--container-format', 'ari', '--file', image.ramdisk,
                          'qemu-guest-ramdisk')
    clients.osc(stack, 'image', 'create', '--disk-format', 'raw',
                '--container-format', 'bare', '--file', image.root,
                '--property', 'kernel_id=%s' % kernel['id'],
                '--property', 'ramdisk_id=%s' % ramdisk['id'],
                '--property', 'os_command_line=%s' % image.cmdline, 'qemu-guest')
    return 'qemu-guest'


def _console(stack, server_id: str) -> str:
    return clients.osc(stack, 'console', 'log', 'show', server_id, fmt_json=False)


def _wait_console(stack, server_id: str, text: str, count: int) -> str:
    """Poll the console log until ``text`` appears ``count`` times; returns the log."""
    def enough() -> str | None:
        log = _console(stack, server_id)
        return log if log.count(text) >= count else None
    try:
        return stack.wait_for(enough, BOOT_TIMEOUT, '%d x %r on the console' % (count, text),
                              interval=1)
    except TimeoutError:
        pytest.fail('console of %s after %ss:\n%s' % (server_id, BOOT_TIMEOUT,
                                                       _console(stack, server_id)))


def _wait_status(stack, server_id: str, status: str) -> dict:
    def reached() -> dict | None:
        shown = clients.osc(stack, 'server', 'show', server_id)
        assert shown['status'] != 'ERROR', shown
        return shown if shown['status'] == status else None
    return stack.wait_for(reached, BOOT_TIMEOUT, 'server %s %s' % (server_id, status),
                          interval=1)


def test_real_guest_boot_console_reboot_stop_start_delete(libvirt_host, qemu_stack):
    stack = qemu_stack
    marker = libvirt_host.marker
    started = time.monotonic()
    image_name = _upload(stack, libvirt_host)

    created = clients.osc(stack, 'server', 'create', '--image', image_name, '--flavor',
                          'm1.nano', '--nic', 'none', '--wait', 'qemu-vm1',
                          timeout=BOOT_TIMEOUT)
    server_id = created['id']
    _made.append(server_id)
    assert created['status'] == 'ACTIVE', created
    assert server_id in _domain_uuids()
    instance_dir = os.path.join(INSTANCES_PATH, server_id)
    assert os.path.isdir(instance_dir)
    boot_started = time.monotonic()
    log = _wait_console(stack, server_id, marker, 1)
    print('\nguest booted: marker %.1f s after ACTIVE; %s' % (
        time.monotonic() - boot_started,
        next(line for line in log.splitlines() if marker in line)))
    # The root disk (qcow2 over the cached raw image) is the guest's /dev/vda.
    assert '%s disk=vda' % marker in log

    # A soft reboot: the guest powers off on the ACPI button and starts again; the log
    # keeps the first boot.
    clients.osc(stack, 'server', 'reboot', '--wait', server_id, fmt_json=False,
                timeout=BOOT_TIMEOUT)
    log = _wait_console(stack, server_id, marker, 2)
    assert log.count(POWER_OFF_LINE) == 1, log

    clients.osc(stack, 'server', 'stop', server_id, fmt_json=False)
    stopped = _wait_status(stack, server_id, 'SHUTOFF')
    assert stopped['OS-EXT-STS:power_state'] in ('Shutdown', 4), stopped
    assert _console(stack, server_id).count(POWER_OFF_LINE) == 2
    clients.osc(stack, 'server', 'start', server_id, fmt_json=False)
    _wait_status(stack, server_id, 'ACTIVE')
    _wait_console(stack, server_id, marker, 3)

    clients.osc(stack, 'server', 'delete', '--wait', server_id, fmt_json=False,
                timeout=BOOT_TIMEOUT)
    print('test wall time %.1f s' % (time.monotonic() - started))
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'server', 'show', server_id)
    assert server_id not in _domain_uuids()
    assert not os.path.exists(instance_dir)
    assert clients.allocations(stack, server_id) == {}
    assert stack.placement is not None
    providers = stack.placement.get('/resource_providers').json()['resource_providers']
    assert providers
    for provider in providers:
        usages = stack.placement.get('/resource_providers/%s/usages'
                                     % provider['uuid']).json()['usages']
        assert not any(usages.values()), (provider['name'], usages)
