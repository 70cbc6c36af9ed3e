"""Guru Meditation Reports of a real daemon process: SIGUSR2 and the file trigger.

novalite-scheduler is the daemon: it starts in a second on SQLite databases and the
in-process ``fake://`` transport (nothing else needs to reach it here).
"""
from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from novalite import version
from tests.functional.test_all import READY, AllInOne

BIN = os.path.dirname(sys.executable)
TITLE = '====%s===='


def _section(name: str) -> str:
    return TITLE % name.center(64)


class Daemon:
    """``novalite-scheduler --config-file F`` with its output in a file."""

    def __init__(self, folder: pathlib.Path, conf: str) -> None:
        self.output = folder / ('scheduler-%d.out' % len(list(folder.glob('*.out'))))
        with open(self.output, 'wb') as out:
            self.process = subprocess.Popen(
                [os.path.join(BIN, 'novalite-scheduler'), '--config-file', conf],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_for('novalite-scheduler started on')

    def text(self) -> str:
        return self.output.read_text()

    def wait_for(self, wanted: str, count: int = 1, timeout: float = 60.0) -> str:
        """The output once ``wanted`` appears ``count`` times in it."""
        deadline = time.monotonic() + timeout
        while self.text().count(wanted) < count:
            if self.process.poll() is not None:
                raise AssertionError('the daemon exited with %s:\n%s'
                                     % (self.process.returncode, self.text()))
            if time.monotonic() > deadline:
                raise AssertionError('no %r (x%d) within %ss:\n%s'
                                     % (wanted, count, timeout, self.text()))
            time.sleep(0.1)
        return self.text()

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


class Site:
    """SQLite databases made by novalite-manage, and config files over them."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        self.base = self.config('base')
        for argv in (('api_db', 'sync'), ('db', 'sync'), ('cell_v2', 'simple_cell_setup')):
            subprocess.run([os.path.join(BIN, 'novalite-manage'), '--config-file',
                            self.base, *argv], check=True, capture_output=True, timeout=120)

    def config(self, name: str, default: str = '', extra: str = '') -> str:
        path = self.folder / ('%s.conf' % name)
        path.write_text(
            '[DEFAULT]\ntransport_url = fake://\nhost = gmrhost\n%s'
            '[api_database]\nconnection = sqlite:///%s\n'
            '[database]\nconnection = sqlite:///%s\n%s'
            % (default, self.folder / 'api.sqlite', self.folder / 'cell1.sqlite', extra))
        return str(path)


@pytest.fixture(scope='module')
def site(tmp_path_factory) -> Site:
    return Site(tmp_path_factory.mktemp('gmr'))


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    yield started
    for daemon in started:
        daemon.kill()


def _assert_a_report(text: str) -> None:
    for name in ('Package', 'Threads', 'Configuration', 'novalite'):
        assert _section(name) in text, name
    assert 'version = %s' % version.version_string() in text
    assert 'novalite/service.py' in text  # a thread's stack
    assert 'host = gmrhost' in text  # the configuration, and the daemon's own section
    assert 'binary = novalite-scheduler' in text
    assert 'connection = ***' in text and 'cell1.sqlite' not in text


def test_sigusr2_dumps_a_report_on_stderr_and_the_daemon_runs_on(site, daemons):
    daemon = Daemon(site.folder, site.base)
    daemons.append(daemon)
    daemon.process.send_signal(signal.SIGUSR2)
    text = daemon.wait_for(_section('novalite'))
    _assert_a_report(text)
    assert 'concurrency_backend = threading' in text
    # Still serving: a second report, then a clean stop.
    daemon.process.send_signal(signal.SIGUSR2)
    daemon.wait_for(_section('novalite'), count=2)
    assert daemon.stop() == 0
    assert 'novalite-scheduler stopped on gmrhost' in daemon.text()


def test_the_file_trigger_on_eventlet_and_sigusr2_beside_it(site, daemons, tmp_path):
    trigger = tmp_path / 'gmr-trigger'
    trigger.touch()
    conf = site.config('eventlet', default='concurrency_backend = eventlet\n',
                       extra='[oslo_reports]\nfile_event_handler = %s\n'
                             'file_event_handler_interval = 1\n' % trigger)
    daemon = Daemon(site.folder, conf)
    daemons.append(daemon)
    # A modification time past the watcher's start, whatever the clocks' granularity.
    future = time.time() + 5
    os.utime(trigger, (future, future))
    text = daemon.wait_for(_section('novalite'))
    _assert_a_report(text)
    assert 'concurrency_backend = eventlet' in text
    assert 'file_event_handler = %s' % trigger in text
    # oslo.reports alone would leave SIGUSR2 to its default action: the end of the daemon.
    daemon.process.send_signal(signal.SIGUSR2)
    daemon.wait_for(_section('novalite'), count=2)
    assert daemon.stop() == 0


def test_each_worker_reports_itself(site, daemons):
    conf = site.config('workers', extra='[scheduler]\nworkers = 2\n')
    daemon = Daemon(site.folder, conf)
    daemons.append(daemon)
    daemon.wait_for('novalite-scheduler started on', count=2)
    workers = [int(pid) for pid in subprocess.run(
        ['ps', '-o', 'pid=', '--ppid', str(daemon.process.pid)], capture_output=True,
        text=True, check=True).stdout.split()]
    assert len(workers) == 2, workers
    for pid in workers:
        os.kill(pid, signal.SIGUSR2)
    text = daemon.wait_for(_section('novalite'), count=2)
    assert sorted(int(line.split()[-1]) for line in text.splitlines()
                  if line.startswith('pid = ')) == sorted(workers)
    assert daemon.process.poll() is None
    assert daemon.stop() == 0


def test_novalite_all_reports_on_sigusr2(tmp_path):
    cloud = AllInOne(str(tmp_path / 'state'))
    try:
        cloud.wait_for_line(READY)
        cloud.process.send_signal(signal.SIGUSR2)
        cloud.wait_for_line('binary = novalite-all')
        text = '\n'.join(cloud.lines)
        for name in ('Package', 'Threads', 'Configuration'):
            assert _section(name) in text, name
        assert 'novalite/cmd/all.py' in text  # the main thread waits for a signal there
        assert cloud.process.poll() is None
        assert cloud.stop() == 0
    finally:
        cloud.kill()
