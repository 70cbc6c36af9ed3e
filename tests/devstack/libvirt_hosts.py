"""Libvirt hosts of their own on one machine, for live migrations between them.

Each :class:`LibvirtHost` is a libvirtd in a mount and UTS namespace of its own (the
network is the machine's: QEMU's migration stream goes over loopback): its own
``host_uuid`` (libvirt refuses to migrate a guest to the host it runs on), hostname,
configuration, runtime, state, cache and log folders (libvirt's paths, bind-mounted
from ``<base>/<name>/``), and no virtlogd (``stdio_handler = "file"``). Its socket is
reached from anywhere as ``<base>/<address>/libvirt-sock``, so one URI template with
the destination's address in it (``[libvirt] live_migration_uri``, ``MIGRATION_URI``)
names every host's socket; libvirtd itself connects to the destination's over it
(peer to peer).

The hosts' instances folders are different folders (each compute's
``instances_path``), yet a domain's XML names its files by the source's path: each
libvirtd sees its own folder at every host's path (bind mounts), as hosts whose
instances folders have the same path and different disks do. What one compute writes
in its folder is what its libvirtd reads, whatever path the domain names.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid

import libvirt

from tests.devstack import libvirtd

# The socket of the host at address %s, under a base folder.
SOCKET = '%s/libvirt-sock'
_SCRIPT = '''set -e
hostname "$1"
%(mounts)s
exec libvirtd --pid-file "$2"
'''


def migration_uri(base: str) -> str:
    """``[libvirt] live_migration_uri`` for the hosts under ``base``."""
    return 'qemu+unix:///system?socket=%s' % os.path.join(base, SOCKET)


class LibvirtHost:
    """A libvirtd for compute host ``name``, reached at loopback ``address``, whose
    instances are in ``instances_path``; ``all_instances_paths`` are every host's (each
    shows this host's folder here)."""

    def __init__(self, base: str, name: str, address: str, instances_path: str,
                 all_instances_paths: list[str]) -> None:
        self.base = os.path.abspath(base)
        self.name = name
        self.address = address
        self.instances_path = instances_path
        self.all_instances_paths = all_instances_paths
        self.run_dir = os.path.join(self.base, name)
        self.socket = os.path.join(self.base, SOCKET % address)
        self.uri = '%s?socket=%s' % (libvirtd.URI, self.socket)
        self.log_file = os.path.join(self.run_dir, 'libvirtd.log')
        self.host_uuid = str(uuid.uuid4())
        self.popen: subprocess.Popen[bytes] | None = None

    def _private(self, name: str) -> str:
        return os.path.join(self.run_dir, name)

    def prepare(self) -> None:
        """The private folders; the configuration is the machine's with this host's
        uuid, without its domains and networks, and without virtlogd."""
        for name, target in libvirtd.PRIVATE_DIRS.items():
            if name == 'etc':
                shutil.copytree(target, self._private(name), symlinks=True,
                                ignore=shutil.ignore_patterns('qemu'))
                os.makedirs(os.path.join(self._private(name), 'qemu'))
                with open(os.path.join(self._private(name), 'libvirtd.conf'), 'a') as conf:
                    conf.write('\nhost_uuid = "%s"\n' % self.host_uuid)
                with open(os.path.join(self._private(name), 'qemu.conf'), 'a') as conf:
                    conf.write('\nstdio_handler = "file"\n')
            else:
                os.makedirs(self._private(name), exist_ok=True)
        os.makedirs(self.instances_path, exist_ok=True)
        os.chmod(self.instances_path, 0o711)
        os.symlink(self._private('run'), os.path.dirname(self.socket))

    def _mounts(self) -> list[str]:
        lines = []
        binds = list(libvirtd.PRIVATE_DIRS.items())
        binds += [(self.instances_path, path) for path in self.all_instances_paths
                  if path != self.instances_path]
        for name, target in binds:
            lines.append('mkdir -p %s' % shlex.quote(target))
            lines.append('mount --bind %s %s' % (shlex.quote(self._private(name)),
                                                 shlex.quote(target)))
        return lines

    def start(self, timeout: float = 60) -> None:
        """:raises RuntimeError: it exited, or did not answer within ``timeout``"""
        self.prepare()
        script = _SCRIPT % {'mounts': '\n'.join(self._mounts())}
        with open(self.log_file, 'ab') as log:
            self.popen = subprocess.Popen(
                ['unshare', '--mount', '--propagation', 'private', '--uts', 'sh', '-c',
                 script, 'sh', self.name, self._private('libvirtd.pid')],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        deadline = time.monotonic() + timeout
        while not libvirtd.reachable(uri=self.uri):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                with open(self.log_file, errors='replace') as log:
                    output = log.read()[-3000:]
                self.stop()
                raise RuntimeError('libvirtd of %s did not answer on %s:\n%s'
                                   % (self.name, self.uri, output))
            time.sleep(0.5)

    def domains(self) -> dict[str, bool]:
        """uuid -> running, of every domain this libvirtd has."""
        conn = libvirt.open(self.uri)
        try:
            return {d.UUIDString(): bool(d.isActive()) for d in conn.listAllDomains(0)}
        finally:
            conn.close()

    def remove_domains(self) -> list[str]:
        """Destroy and undefine every domain; returns their uuids."""
        conn = libvirt.open(self.uri)
        try:
            found = []
            for domain in conn.listAllDomains(0):
                found.append(domain.UUIDString())
                if domain.isActive():
                    domain.destroy()
                if domain.isPersistent():
                    domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
            return found
        finally:
            conn.close()

    def stop(self, timeout: float = 30) -> list[str]:
        """Its domains destroyed, SIGTERM it and remove its folders; returns what did
        not exit."""
        left = []
        if self.popen is not None and self.popen.poll() is None:
            try:
                self.remove_domains()
            except libvirt.libvirtError:
                pass
            self.popen.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
                left.append('libvirtd of %s (pid %d, killed)' % (self.name, self.popen.pid))
        if os.path.islink(os.path.dirname(self.socket)):
            os.unlink(os.path.dirname(self.socket))
        shutil.rmtree(self.run_dir, ignore_errors=True)
        shutil.rmtree(self.instances_path, ignore_errors=True)
        return left
