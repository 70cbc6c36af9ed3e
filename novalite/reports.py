"""Guru Meditation Reports: a daemon's threads, configuration and versions on demand.

As in Nova, each daemon calls ``setup_autorun`` once its configuration is parsed:
SIGUSR2, and with ``[oslo_reports] file_event_handler`` a change of that file's
modification time, makes oslo.reports write a report to stderr, or to a file in
``[oslo_reports] log_dir``. Secret options show as ``***``. Besides oslo.reports' own
sections (package, threads, green threads, processes, configuration) the report has a
``novalite`` section: the daemon's own facts and the versions of the libraries it uses.
"""
from __future__ import annotations

import importlib.metadata
import os
import signal
import sys
import time

from oslo_config import cfg
from oslo_log import log as logging
from oslo_reports import opts as gmr_opts
from oslo_reports.models import with_default_views

from novalite import concurrency, version

if concurrency.choose() == 'threading' and 'greenlet' not in sys.modules:
    # oslo.reports imports greenlet, if installed, only to list green threads, which a
    # threading process has none of; a compute process keeps it out (1 MB).
    sys.modules['greenlet'] = None  # type: ignore[assignment]  # blocks the import
    try:
        from oslo_reports import guru_meditation_report as gmr
    finally:
        del sys.modules['greenlet']
else:
    from oslo_reports import guru_meditation_report as gmr

LOG = logging.getLogger(__name__)

# Distributions whose versions matter when reading a report of a misbehaving daemon.
LIBRARIES = ('oslo.config', 'oslo.db', 'oslo.log', 'oslo.messaging', 'oslo.reports',
             'oslo.service', 'oslo.versionedobjects', 'SQLAlchemy', 'alembic', 'PyMySQL',
             'keystoneauth1', 'libvirt-python', 'os-vif', 'eventlet', 'greenlet')

SECTION = 'novalite'


class _Daemon:
    """What the ``novalite`` section shows: set by ``setup_autorun``, read at each
    report."""

    binary = ''
    conf: cfg.ConfigOpts | None = None
    started = 0.0


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register oslo.reports' ``[oslo_reports]`` options (idempotent)."""
    gmr_opts.set_defaults(conf)


def _library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = 'not installed'
    return versions


def daemon_section() -> with_default_views.ModelWithDefaultViews:
    """The ``novalite`` section: binary, host, process, backend, config files, libraries."""
    conf = _Daemon.conf
    facts: dict[str, object] = {
        'binary': _Daemon.binary,
        'version': version.version_string(),
        'host': conf.host if conf is not None and 'host' in conf else '',
        'pid': os.getpid(),
        'python': sys.version.split()[0],
        'concurrency_backend': concurrency.choose(),
        'uptime_seconds': round(time.monotonic() - _Daemon.started, 1),
        'config_files': ', '.join(conf.config_file) if conf is not None else '',
        'libraries': _library_versions(),
    }
    return with_default_views.ModelWithDefaultViews(facts)


def setup_autorun(binary: str, conf: cfg.ConfigOpts, signal_too: bool = True) -> None:
    """Arm the report of daemon ``binary`` (after ``conf`` was parsed).

    :param signal_too: with ``[oslo_reports] file_event_handler`` set, oslo.reports
        leaves SIGUSR2 alone, and its default action ends the process: a daemon keeps
        SIGUSR2 as a second trigger so that the usual ``kill -USR2`` never kills it.
        False where a WSGI server may own SIGUSR2 (gunicorn, uWSGI).

    A ``file_event_handler`` that cannot be read is logged and SIGUSR2 is the trigger:
    a missing trigger file should not keep a daemon from starting, nor leave it
    without any way to dump a report.
    """
    register_opts(conf)
    first = not _Daemon.binary
    _Daemon.binary, _Daemon.conf, _Daemon.started = binary, conf, time.monotonic()
    if first:
        gmr.TextGuruMeditation.register_section(SECTION, daemon_section)
    reports = conf.oslo_reports
    trigger = reports.file_event_handler
    if trigger and not os.access(trigger, os.R_OK):
        LOG.error('[oslo_reports] file_event_handler %s cannot be read: Guru Meditation '
                  'Reports are triggered by SIGUSR2 instead', trigger)
        trigger = None
    if trigger:
        gmr.TextGuruMeditation.setup_autorun(version, service_name=binary, conf=conf)
    if trigger and not signal_too:
        return
    try:
        gmr.TextGuruMeditation.setup_autorun(version, service_name=binary,
                                             log_dir=reports.log_dir, signum=signal.SIGUSR2)
    except ValueError:
        # Not the main thread (mod_wsgi loads the application on one of its threads).
        if not trigger:
            LOG.warning('Guru Meditation Reports of %s need [oslo_reports] '
                        'file_event_handler: this process cannot take SIGUSR2', binary)
