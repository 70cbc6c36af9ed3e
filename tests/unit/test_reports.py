"""Guru Meditation Reports: how a daemon arms them and what the report shows."""
from __future__ import annotations

import importlib.metadata
import logging
import os
import signal
import threading
from collections.abc import Iterator

import pytest
from oslo_config import cfg
from oslo_reports import guru_meditation_report as gmr

from novalite import reports, version
from novalite.conf import CONF


@pytest.fixture(autouse=True)
def _fresh(monkeypatch) -> Iterator[None]:
    """Each test arms reports anew; the process's SIGUSR2 and oslo.reports' sections
    come back as they were."""
    monkeypatch.setattr(gmr.TextGuruMeditation, 'persistent_sections', [], raising=False)
    monkeypatch.setattr(reports._Daemon, 'binary', '')
    monkeypatch.setattr(reports._Daemon, 'conf', None)
    previous = signal.getsignal(signal.SIGUSR2)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR2, previous)


@pytest.fixture
def conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt('host', default='h1'))
    reports.register_opts(conf)
    conf([], project='novalite-test')
    return conf


@pytest.fixture
def secret_connection() -> Iterator[str]:
    """A database URL with a password in the process's CONF (the report shows CONF)."""
    CONF.set_override('connection', 'mysql+pymysql://nova:s3cret@db/nova', group='database')
    try:
        yield 's3cret'
    finally:
        CONF.clear_override('connection', group='database')


def _sigusr2() -> None:
    handler = signal.getsignal(signal.SIGUSR2)
    assert callable(handler), 'SIGUSR2 is not armed: %r' % handler
    handler(signal.SIGUSR2, None)


def test_sigusr2_prints_threads_configuration_and_versions(conf, capsys,
                                                           secret_connection):
    reports.setup_autorun('novalite-test', conf)
    _sigusr2()
    report = capsys.readouterr().err
    for section in ('Guru Meditation', 'Package', 'Threads', 'Configuration', 'novalite'):
        assert '====%s====' % section.center(64) in report, section
    assert 'product = novalite (OpenStack Compute)' in report
    assert 'version = %s' % version.version_string() in report
    assert 'in test_sigusr2_prints_threads_configuration_and_versions' in report
    assert 'graceful_shutdown_timeout = ' in report
    assert secret_connection not in report
    assert '  connection = ***' in report
    assert 'binary = novalite-test' in report
    assert 'host = h1' in report
    assert 'pid = %d' % os.getpid() in report
    assert 'oslo.reports = %s' % importlib.metadata.version('oslo.reports') in report


def test_a_second_setup_keeps_one_novalite_section(conf):
    reports.setup_autorun('novalite-one', conf)
    reports.setup_autorun('novalite-two', conf)
    report = gmr.TextGuruMeditation(version).run()
    assert report.count('====%s====' % 'novalite'.center(64)) == 1
    assert 'binary = novalite-two' in report


def test_log_dir_takes_the_report_to_a_file(conf, tmp_path, capsys):
    conf.set_override('log_dir', str(tmp_path), group='oslo_reports')
    reports.setup_autorun('novalite-test', conf)
    _sigusr2()
    assert capsys.readouterr().err == ''
    [name] = os.listdir(tmp_path)
    assert name.startswith('novalite-test_gurumeditation_')
    assert 'binary = novalite-test' in (tmp_path / name).read_text()


@pytest.fixture
def watched(monkeypatch) -> list[tuple]:
    """The file watchers oslo.reports was asked to start (not started: their threads
    would outlive the test)."""
    calls: list[tuple] = []
    monkeypatch.setattr(gmr.TextGuruMeditation, '_setup_file_watcher',
                        classmethod(lambda cls, *args: calls.append(args)))
    return calls


def test_a_file_trigger_keeps_sigusr2_in_a_daemon(conf, tmp_path, watched):
    trigger = tmp_path / 'trigger'
    trigger.touch()
    conf.set_override('file_event_handler', str(trigger), group='oslo_reports')
    conf.set_override('file_event_handler_interval', 3, group='oslo_reports')
    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    reports.setup_autorun('novalite-test', conf)
    assert [args[:2] for args in watched] == [(str(trigger), 3)]
    assert callable(signal.getsignal(signal.SIGUSR2))


def test_a_file_trigger_alone_under_a_wsgi_server(conf, tmp_path, watched):
    trigger = tmp_path / 'trigger'
    trigger.touch()
    conf.set_override('file_event_handler', str(trigger), group='oslo_reports')
    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    reports.setup_autorun('novalite-api', conf, signal_too=False)
    assert len(watched) == 1
    assert signal.getsignal(signal.SIGUSR2) is signal.SIG_DFL


def test_a_missing_trigger_file_falls_back_to_sigusr2(conf, tmp_path, watched, caplog):
    missing = str(tmp_path / 'nowhere')
    conf.set_override('file_event_handler', missing, group='oslo_reports')
    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    with caplog.at_level(logging.ERROR):
        reports.setup_autorun('novalite-api', conf, signal_too=False)
    assert watched == []
    assert callable(signal.getsignal(signal.SIGUSR2))
    assert '%s cannot be read' % missing in caplog.text


def test_the_version_is_the_installed_distributions():
    assert version.version_string() == importlib.metadata.version('novalite')
    assert version.version_string_with_package() == version.version_string()


def test_off_the_main_thread_only_the_file_trigger_can_work(conf, caplog):
    # mod_wsgi loads the application on one of its threads: no signal handler there.
    errors: list[BaseException] = []

    def arm() -> None:
        try:
            reports.setup_autorun('novalite-api', conf, signal_too=False)
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    with caplog.at_level(logging.WARNING):
        thread = threading.Thread(target=arm)
        thread.start()
        thread.join()
    assert errors == []
    assert signal.getsignal(signal.SIGUSR2) is signal.SIG_DFL
    assert 'need [oslo_reports] file_event_handler' in caplog.text
