"""Prometheus metrics of a daemon (``[metrics] enabled``; off by default).

The call sites only use the functions below; each is a no-op while metrics are off
(until :func:`start_exporter` started the exporter), so a daemon with metrics off
counts nothing. The metrics live in the daemon that sees the event: the conductor
counts the boots it starts and those it puts in ERROR, the compute hosts the boots they
make ACTIVE (and their build time) or fail for good, every RPC server the messages it
handles, every client of Placement and Glance its requests. docs/metrics.md lists them.

A daemon whose workers are forked processes (the API, the conductor, the scheduler
with ``workers`` above 1) serves them in prometheus_client's multiprocess mode: each
process writes its values to files in a directory the master made before the fork,
and the master's exporter serves their sum on the one port.
"""
from __future__ import annotations

import atexit
import dataclasses
import datetime
import os
import shutil
import tempfile
import threading
from wsgiref.simple_server import WSGIServer

import prometheus_client
from oslo_concurrency import processutils
from oslo_log import log as logging
from prometheus_client import multiprocess, values

from novalite.conf import CONF
from novalite.conf import metrics as metrics_conf

LOG = logging.getLogger(__name__)

# Daemons that read the cell databases, and so can count the servers per state.
DB_BINARIES = ('novalite-all', 'novalite-api', 'novalite-conductor')

BUILD_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
RPC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
               120.0, 300.0)


class _Metrics:
    """The metrics a process updates (registered with ``registry``; with None, read
    from the multiprocess files instead)."""

    def __init__(self, registry: prometheus_client.CollectorRegistry | None) -> None:
        self.boots_started = prometheus_client.Counter(
            'novalite_boots_started', 'Servers the conductor started to build '
            '(scheduling included).', registry=registry)
        self.boots_active = prometheus_client.Counter(
            'novalite_boots_active', 'Builds that ended with the server ACTIVE.',
            registry=registry)
        self.boots_error = prometheus_client.Counter(
            'novalite_boots_error', 'Builds that ended with the server in ERROR, by the '
            'error that ended them (NoValidHost, MaxRetriesExceeded...).', ['reason'],
            registry=registry)
        self.build_seconds = prometheus_client.Histogram(
            'novalite_build_duration_seconds', 'Time from the create request to ACTIVE.',
            buckets=BUILD_BUCKETS, registry=registry)
        self.rpc_seconds = prometheus_client.Histogram(
            'novalite_rpc_duration_seconds', 'Time the RPC server spent handling a '
            'message, by topic, method and kind (call or cast).',
            ['topic', 'method', 'kind'], buckets=RPC_BUCKETS, registry=registry)
        self.http_seconds = prometheus_client.Histogram(
            'novalite_http_client_duration_seconds', 'Latency of the requests to other '
            'services, by service, method and status class (2xx... or none: no answer).',
            ['service', 'method', 'status_class'], registry=registry)
        self.http_errors = prometheus_client.Counter(
            'novalite_http_client_errors', 'Requests to other services that got no '
            'answer or a 5xx.', ['service', 'method', 'status_class'], registry=registry)


@dataclasses.dataclass
class _Exporter:
    binary: str
    metrics: _Metrics
    server: WSGIServer
    thread: threading.Thread
    multiprocess_dir: str | None


_LOCK = threading.Lock()
_EXPORTER: _Exporter | None = None


def _metrics() -> _Metrics | None:
    exporter = _EXPORTER
    return exporter.metrics if exporter is not None else None


def status_class(status: int | None) -> str:
    """``2xx``, ``4xx``... of an HTTP status; ``none`` when there was no answer."""
    return 'none' if status is None else '%dxx' % (status // 100)


def observe_http(service: str, method: str, status: int | None, seconds: float) -> None:
    """One HTTP call to another service (``placement``, ``glance``...): its latency, and
    an error when ``status`` is None (no answer) or 5xx."""
    metrics = _metrics()
    if metrics is None:
        return
    labels = (service, method.upper(), status_class(status))
    metrics.http_seconds.labels(*labels).observe(seconds)
    if status is None or status >= 500:
        metrics.http_errors.labels(*labels).inc()


def observe_rpc(topic: str, method: str, kind: str, seconds: float) -> None:
    """One RPC message handled by this server (``kind``: ``call`` or ``cast``)."""
    metrics = _metrics()
    if metrics is not None:
        metrics.rpc_seconds.labels(topic, method, kind).observe(seconds)


def boots_started(count: int = 1) -> None:
    """The conductor took ``count`` build requests to schedule and build."""
    metrics = _metrics()
    if metrics is not None and count:
        metrics.boots_started.inc(count)


def boot_active(created_at: datetime.datetime | None,
                launched_at: datetime.datetime | None) -> None:
    """A build ended ACTIVE; its time is from the create request to ``launched_at``."""
    metrics = _metrics()
    if metrics is None:
        return
    metrics.boots_active.inc()
    if created_at is not None and launched_at is not None:
        metrics.build_seconds.observe(max(0.0, (launched_at - created_at).total_seconds()))


def boot_error(error: BaseException | str) -> None:
    """A build ended in ERROR because of ``error`` (its class name is the reason)."""
    metrics = _metrics()
    if metrics is not None:
        reason = error if isinstance(error, str) else type(error).__name__
        metrics.boots_error.labels(reason).inc()


def port_of(binary: str) -> int:
    """``[metrics] port``, or the daemon's own default port."""
    port: int | None = CONF.metrics.port
    if port is None:
        port = metrics_conf.DEFAULT_PORTS.get(binary, metrics_conf.DEFAULT_PORTS['novalite-all'])
    return port


def _forks_workers(binary: str) -> bool:
    """Whether the daemon's launcher forks worker processes after its main started."""
    if binary == 'novalite-api':
        return (CONF.api.osapi_compute_workers or processutils.get_worker_count()) > 1
    if binary == 'novalite-conductor':
        return (CONF.conductor.workers or 1) > 1
    if binary == 'novalite-scheduler':
        return (CONF.scheduler.workers or 1) > 1
    return False


def start_exporter(binary: str) -> None:
    """Serve ``/metrics`` on ``[metrics] port`` when metrics are enabled (once per
    process; ``binary`` labels the daemon, in ``target_info``, and picks the default
    port). A port that cannot be bound is logged, and the daemon runs without metrics.
    """
    global _EXPORTER
    if not CONF.metrics.enabled:
        return
    with _LOCK:
        if _EXPORTER is not None:
            LOG.debug('The metrics exporter of %s already runs', _EXPORTER.binary)
            return
        # The *_created samples only say when the process started: a series each, and
        # the process's start time is what a restart shows anyway.
        prometheus_client.disable_created_metrics()
        registry = prometheus_client.CollectorRegistry(target_info={'binary': binary})
        directory = _multiprocess_dir() if _forks_workers(binary) else None
        if directory is not None:
            multiprocess.MultiProcessCollector(registry, path=directory)
        if binary in DB_BINARIES:
            from novalite import metrics_collectors
            registry.register(metrics_collectors.ServersCollector(
                CONF.metrics.servers_cache_seconds))
        host, port = CONF.metrics.host, port_of(binary)
        try:
            server, thread = prometheus_client.start_http_server(port, host, registry)
        except OSError as exc:
            LOG.error('Metrics are enabled but %s cannot serve them on %s:%d: %s; '
                      'running without metrics', binary, host, port, exc)
            if directory is not None:
                _single_process_mode(directory)
            return
        _EXPORTER = _Exporter(binary, _Metrics(None if directory else registry), server,
                              thread, directory)
        LOG.info('%s serves Prometheus metrics on http://%s:%d/metrics%s', binary, host,
                 port, ' (its workers summed)' if directory else '')


def _multiprocess_dir() -> str:
    """Switch prometheus_client to multiprocess mode on a new, empty directory (kept
    by the workers through the environment, removed when the master exits)."""
    directory = tempfile.mkdtemp(prefix='novalite-metrics-')
    os.environ['PROMETHEUS_MULTIPROC_DIR'] = directory
    values.ValueClass = values.MultiProcessValue()
    master = os.getpid()

    def remove() -> None:
        if os.getpid() == master:  # a forked worker's exit leaves it to the master
            shutil.rmtree(directory, ignore_errors=True)

    atexit.register(remove)
    return directory


def _single_process_mode(directory: str) -> None:
    os.environ.pop('PROMETHEUS_MULTIPROC_DIR', None)
    values.ValueClass = values.MutexValue
    shutil.rmtree(directory, ignore_errors=True)


def stop_exporter() -> None:
    """Stop serving and counting (tests; a daemon's exporter lives as long as it)."""
    global _EXPORTER
    with _LOCK:
        exporter, _EXPORTER = _EXPORTER, None
        if exporter is None:
            return
        exporter.server.shutdown()
        exporter.server.server_close()
        exporter.thread.join()
        if exporter.multiprocess_dir is not None:
            _single_process_mode(exporter.multiprocess_dir)
