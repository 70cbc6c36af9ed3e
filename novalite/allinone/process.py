"""Child processes of novalite-all and of the devstack-style stack: started from a command
line in a session of their own, signalled as a process group, restarted with the same
command line."""
from __future__ import annotations

import os
import signal
import subprocess
import time


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment minus what would override a daemon's config file,
    and minus ``PYTHONDONTWRITEBYTECODE``: an installed novalite has its bytecode
    (pip compiles it), so the daemons keep theirs too instead of compiling every module
    from source at each start (0.1 s of CPU per daemon)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('NOVALITE_CONCURRENCY_BACKEND', 'PYTHONDONTWRITEBYTECODE')
           and not k.startswith('OS_')}
    env['PYTHONUNBUFFERED'] = '1'
    env.update(extra)
    return env


def group_alive(pgid: int) -> bool:
    """Whether any process of the group ``pgid`` still exists."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(pid: int, timeout: float = 15.0, signalled: bool = False) -> None:
    """SIGTERM the process group led by ``pid``, SIGKILL it if it outlives ``timeout``.

    For processes this Python process did not start (``down`` from another shell), so
    it polls instead of waiting on the child. ``signalled``: SIGTERM was sent already.
    """
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            if not (signalled and sig == signal.SIGTERM):
                os.killpg(pid, sig)
            else:
                os.killpg(pid, 0)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


class Process:
    """One daemon: its command line, its log file, and its process group."""

    def __init__(self, name: str, argv: list[str], log_file: str,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log_file = log_file
        self.env = env if env is not None else child_env()
        self.popen: subprocess.Popen | None = None
        self._terminating = False

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen is not None else None

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> None:
        """Start the command line; its output goes to the log file (appended)."""
        if self.running():
            raise RuntimeError('%s is already running (pid %s)' % (self.name, self.pid))
        with open(self.log_file, 'ab') as log:
            # A session of its own: signals go to the whole group (gunicorn's workers,
            # the API's worker processes), and a Ctrl-C on the harness does not reach it.
            self._terminating = False
            self.popen = subprocess.Popen(self.argv, env=self.env, stdout=log,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)

    def signal(self, sig: int) -> None:
        if self.popen is not None and self.running():
            os.killpg(self.popen.pid, sig)
            # A second SIGTERM would cut a graceful stop short.
            self._terminating |= sig == signal.SIGTERM

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (graceful), then SIGKILL after ``timeout``; returns the exit code."""
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            if not self._terminating:
                self.signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.popen.wait()
        # The leader may have gone while a worker of its group stays: reap the group.
        kill_group(self.popen.pid, timeout=2.0)
        return self.popen.returncode

    def kill(self) -> int | None:
        """SIGKILL the group at once, as a crash or an OOM kill would."""
        if self.popen is None:
            return None
        self.signal(signal.SIGKILL)
        self.popen.wait()
        kill_group(self.popen.pid, timeout=1.0)
        return self.popen.returncode

    def restart(self, timeout: float = 15.0) -> None:
        """Stop (if running) and start again with the same command line."""
        self.stop(timeout)
        self.start()

    def tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_file, errors='replace') as log:
                return ''.join(log.readlines()[-lines:])
        except OSError:
            return ''
