"""libvirtd for the tests that run real QEMU guests, on a machine without systemd.

If ``qemu:///system`` already answers, the running daemon is used and left alone;
otherwise virtlogd and libvirtd are started here, as daemons with pid files in a
directory of the test's, and stopped again (by those pids) at the end.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

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


def reachable(timeout: float = 30) -> bool:
    """Whether ``qemu:///system`` answers (the first connection probes QEMU, ~8 s)."""
    try:
        result = subprocess.run(['virsh', '-c', URI, 'version'], capture_output=True,
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
