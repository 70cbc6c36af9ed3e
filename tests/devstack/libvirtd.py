"""libvirtd for the tests that run real QEMU guests, on a machine without systemd.

If ``qemu:///system`` already answers, the running daemon is used and left alone;
otherwise virtlogd and libvirtd are started here, as daemons with pid files in a
directory of the test's, and stopped again (by those pids) at the end.

A compute host in a network namespace of its own gets a libvirtd of its own there
(``NamespaceDaemon``), beside the machine's one.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence

import pytest

URI = 'qemu:///system'
PACKAGES = {'libvirtd': 'libvirt-daemon-system', 'virtlogd': 'libvirt-daemon-system',
            'qemu-system-x86_64': 'qemu-system-x86', 'qemu-img': 'qemu-utils',
            'apt-get': 'apt', 'dpkg-deb': 'dpkg'}


def unavailable(reason: str) -> None:
    """Skip, or fail under ``CI`` (where the packages must be there)."""
    msg = 'real QEMU guests unavailable: %s' % reason
    if os.environ.get('CI'):
        pytest.fail(msg)
    pytest.skip(msg)


def check_packages() -> None:
    missing = sorted({pkg for binary, pkg in PACKAGES.items()
                      if shutil.which(binary, path=os.environ.get('PATH', '') +
                                      ':/usr/sbin:/sbin') is None})
    if missing:
        unavailable('missing packages %s (tools/setup.sh installs them)' % ', '.join(missing))
    if os.geteuid() != 0:
        unavailable('qemu:///system needs root')


def reachable(timeout: float = 30, uri: str = URI) -> bool:
    """Whether ``uri`` answers (the first connection probes QEMU, ~8 s)."""
    try:
        result = subprocess.run(['virsh', '-c', uri, 'version'], capture_output=True,
                                timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


class Daemons:
    """virtlogd and libvirtd started by this process, with pid files in ``run_dir``."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.started: list[tuple[str, str]] = []

    def start(self, timeout: float = 60) -> None:
        os.makedirs(self.run_dir, exist_ok=True)
        for daemon in ('virtlogd', 'libvirtd'):
            pid_file = os.path.join(self.run_dir, daemon + '.pid')
            binary = shutil.which(daemon, path='/usr/sbin:/sbin:/usr/bin')
            if binary is None:
                raise RuntimeError('%s is not installed' % daemon)
            subprocess.run([binary, '-d', '-p', pid_file], check=True, timeout=30)
            self.started.append((daemon, pid_file))
        deadline = time.monotonic() + timeout
        while not reachable():
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('libvirtd started but %s does not answer' % URI)
            time.sleep(0.5)

    def stop(self, timeout: float = 30) -> list[str]:
        """SIGTERM what was started (libvirtd first); returns what did not exit."""
        left = []
        for daemon, pid_file in reversed(self.started):
            pid = _read_pid(pid_file)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            if not _wait_gone(pid, timeout):
                left.append('%s (pid %d)' % (daemon, pid))
        self.started = []
        return left


def _read_pid(pid_file: str) -> int | None:
    try:
        with open(pid_file) as pid:
            return int(pid.read().strip())
    except (OSError, ValueError):
        return None


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


# What a NamespaceDaemon gets a private copy of: libvirt's configuration, runtime, state,
# cache and log folders, by their place in the machine's tree.
PRIVATE_DIRS = {'etc': '/etc/libvirt', 'run': '/run/libvirt', 'lib': '/var/lib/libvirt',
                'cache': '/var/cache/libvirt', 'log': '/var/log/libvirt'}
# Run by `ip netns exec NETNS unshare --uts sh -c SCRIPT sh HOSTNAME`: `ip netns exec`
# gives it a mount namespace of its own (mounts made in it stay there), unshare a
# hostname of its own. libvirtd is exec'd: the process started is libvirtd itself.
_NAMESPACE_SCRIPT = '''set -e
hostname "$1"
%(mounts)s
exec libvirtd
'''


class NamespaceDaemon:
    """A libvirtd of its own for a compute host whose network namespace is ``netns``.

    Its QEMU processes run in that namespace, where they open the taps that the host's
    novalite-compute (in the namespace too: ``Stack(netns_computes=True)``) made and
    plugged into the host's ``br-int``. So that it neither sees nor touches the domains
    of the machine's libvirtd, it runs with private folders (``PRIVATE_DIRS``, under
    ``run_dir``, bind-mounted in its own mount namespace; its configuration a copy of
    the machine's without domains or networks, and with ``stdio_handler = "file"``: no
    virtlogd), and with its hostname set to ``hostname``, the name its compute driver
    reports as the node. Its socket is a file under ``run_dir``, so the compute, in
    another mount namespace, connects to ``uri`` (``qemu:///system?socket=...``). No
    cgroups: ``ip netns exec`` mounts a /sys of the namespace, without them.

    It has a ``host_uuid`` of its own (libvirt refuses to live-migrate a guest to a host
    with the uuid of the one it runs on), and ``binds`` (source, target) are bind-mounted
    in its mount namespace: e.g. its compute's instances folder at another host's
    instances path, so that the files a migrating domain names by the source's path
    are this host's.
    """

    def __init__(self, run_dir: str, hostname: str,
                 binds: Sequence[tuple[str, str]] = ()) -> None:
        self.run_dir = os.path.abspath(run_dir)
        self.hostname = hostname
        self.binds = tuple(binds)
        self.host_uuid = str(uuid.uuid4())
        self.socket = os.path.join(self._private('run'), 'libvirt-sock')
        self.uri = '%s?socket=%s' % (URI, self.socket)
        self.log_file = os.path.join(self.run_dir, 'libvirtd.log')
        self.popen: subprocess.Popen[bytes] | None = None

    def _private(self, name: str) -> str:
        return os.path.join(self.run_dir, name)

    def _mounts(self) -> Iterator[str]:
        binds = [(self._private(name), target) for name, target in PRIVATE_DIRS.items()]
        for source, target in [*binds, *self.binds]:
            # Made as libvirtd would make it (the machine's libvirtd may not have run).
            yield 'mkdir -p %s' % shlex.quote(target)
            yield 'mount --bind %s %s' % (shlex.quote(source), shlex.quote(target))

    def prepare(self) -> None:
        """The private folders, and the configuration copied from the machine's."""
        for name, target in PRIVATE_DIRS.items():
            if name == 'etc' and not os.path.exists(self._private(name)):
                shutil.copytree(target, self._private(name), symlinks=True,
                                ignore=shutil.ignore_patterns('qemu'))
                os.makedirs(os.path.join(self._private(name), 'qemu'))
                with open(os.path.join(self._private(name), 'qemu.conf'), 'a') as conf:
                    conf.write('\n# a NamespaceDaemon: no virtlogd\nstdio_handler = "file"\n')
                with open(os.path.join(self._private(name), 'libvirtd.conf'), 'a') as conf:
                    conf.write('\nhost_uuid = "%s"\n' % self.host_uuid)
            else:
                os.makedirs(self._private(name), exist_ok=True)

    def start(self, netns: str, timeout: float = 60) -> None:
        """Start it in ``netns``; return once ``uri`` answers.

        :raises RuntimeError: it exited, or did not answer within ``timeout``
        """
        self.prepare()
        script = _NAMESPACE_SCRIPT % {'mounts': '\n'.join(self._mounts())}
        with open(self.log_file, 'ab') as log:
            self.popen = subprocess.Popen(
                ['ip', 'netns', 'exec', netns, 'unshare', '--uts', 'sh', '-c', script, 'sh',
                 self.hostname], stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not reachable(uri=self.uri):
            if self.popen.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('libvirtd in %s did not answer on %s; see %s'
                                   % (netns, self.uri, self.log_file))
            time.sleep(0.5)

    def stop(self, timeout: float = 30) -> list[str]:
        """SIGTERM it (its domains should be gone: QEMU outlives libvirtd); returns what
        did not exit."""
        if self.popen is None or self.popen.poll() is not None:
            return []
        self.popen.terminate()
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            return ['libvirtd in a namespace (pid %d, killed)' % self.popen.pid]
        return []


# A libvirt secret holding a Ceph user's key: what a compute host needs to open Cinder's
# RBD volumes (their connection info names the secret by uuid, as ``secret_uuid``).
_CEPH_SECRET = ('<secret ephemeral="no" private="no"><uuid>%s</uuid>'
                '<usage type="ceph"><name>client.%s secret %s</name></usage></secret>')


def define_ceph_secret(uri: str, secret_uuid: str, key: str, user: str = 'cinder') -> None:
    """Define the secret ``secret_uuid`` of type ``ceph`` on the libvirtd at ``uri`` and
    set its value to the cephx ``key`` (base64, as keyrings hold it); ``virsh
    secret-undefine`` removes it. A secret already there with that uuid is redefined.

    :raises RuntimeError: virsh failed
    """
    with tempfile.NamedTemporaryFile('w', suffix='.xml') as xml:
        # The usage name is unique per libvirtd: the uuid in it lets clusters coexist.
        xml.write(_CEPH_SECRET % (secret_uuid, user, secret_uuid))
        xml.flush()
        _virsh(uri, 'secret-define', xml.name)
    # The value through a file, not the command line (other users see command lines);
    # virsh decodes the file's base64, as ``--base64 KEY`` would.
    with tempfile.NamedTemporaryFile('w') as value:
        value.write(key)
        value.flush()
        _virsh(uri, 'secret-set-value', '--secret', secret_uuid, '--file', value.name)


def undefine_ceph_secret(uri: str, secret_uuid: str) -> None:
    """Remove the secret ``secret_uuid`` from the libvirtd at ``uri`` (gone already: fine)."""
    result = subprocess.run(['virsh', '-c', uri, 'secret-undefine', secret_uuid],
                            capture_output=True, text=True, timeout=30)
    if result.returncode != 0 and 'no secret with matching uuid' not in result.stderr:
        raise RuntimeError('virsh secret-undefine %s failed: %s'
                           % (secret_uuid, result.stderr.strip()))


def _virsh(uri: str, *args: str) -> str:
    result = subprocess.run(['virsh', '-c', uri, *args], capture_output=True, text=True,
                            timeout=30)
    if result.returncode != 0:
        raise RuntimeError('virsh %s failed (%s): %s' % (' '.join(args), result.returncode,
                                                         result.stderr.strip()))
    return result.stdout
