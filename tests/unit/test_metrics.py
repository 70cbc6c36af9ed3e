"""The Prometheus exporter: off by default (no port, nothing counted), once per
process, the workers of a forking daemon summed on the master's port, and what each
observation adds."""
from __future__ import annotations

import datetime
import multiprocessing
import os
import socket
from collections.abc import Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from novalite import context as nl_context
from novalite import exception, metrics, metrics_collectors, rpc
from novalite.conf import CONF
from novalite.image import glance
from tests.fixtures.wsgi_server import WSGIServer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _bound(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return True
    return False


@pytest.fixture
def port() -> Iterator[int]:
    port = _free_port()
    CONF.set_override('port', port, group='metrics')
    try:
        yield port
    finally:
        metrics.stop_exporter()
        for name in ('port', 'enabled'):
            CONF.clear_override(name, group='metrics')
        CONF.clear_override('workers', group='conductor')


def _scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    resp = requests.get('http://127.0.0.1:%d/metrics' % port, timeout=10)
    assert resp.status_code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(resp.text)
            for s in family.samples}


def test_disabled_binds_no_port_and_counts_nothing(port):
    assert CONF.metrics.enabled is False
    metrics.start_exporter('novalite-compute')
    assert not _bound(port)
    metrics.boots_started(3)
    metrics.observe_http('placement', 'GET', 200, 0.1)
    assert metrics._metrics() is None


def test_enabled_serves_each_observation(port):
    CONF.set_override('enabled', True, group='metrics')
    metrics.start_exporter('novalite-compute')
    assert _bound(port)
    metrics.boots_started(2)
    metrics.boot_active(None, None)
    metrics.boot_error(exception.NoValidHost(reason='none'))
    metrics.boot_error('MaxRetriesExceeded')
    metrics.observe_http('placement', 'get', 200, 0.02)
    metrics.observe_http('placement', 'PUT', 409, 0.02)
    metrics.observe_http('glance', 'GET', 503, 0.5)
    metrics.observe_http('glance', 'GET', None, 1.5)
    metrics.observe_rpc('conductor', 'schedule_and_build_instances', 'cast', 0.3)
    samples = _scrape(port)

    assert samples['novalite_boots_started_total', ()] == 2
    assert samples['novalite_boots_active_total', ()] == 1
    # No create time known: counted ACTIVE, no build time made up.
    assert samples['novalite_build_duration_seconds_count', ()] == 0
    assert samples['novalite_boots_error_total', (('reason', 'NoValidHost'),)] == 1
    assert samples['novalite_boots_error_total', (('reason', 'MaxRetriesExceeded'),)] == 1
    http = 'novalite_http_client_duration_seconds_count'
    assert samples[http, (('method', 'GET'), ('service', 'placement'),
                          ('status_class', '2xx'))] == 1
    assert samples[http, (('method', 'PUT'), ('service', 'placement'),
                          ('status_class', '4xx'))] == 1
    errors = 'novalite_http_client_errors_total'
    assert samples[errors, (('method', 'GET'), ('service', 'glance'),
                            ('status_class', '5xx'))] == 1
    assert samples[errors, (('method', 'GET'), ('service', 'glance'),
                            ('status_class', 'none'))] == 1
    assert not any(name == errors and dict(labels)['service'] == 'placement'
                   for name, labels in samples)
    assert samples['novalite_rpc_duration_seconds_count', (
        ('kind', 'cast'), ('method', 'schedule_and_build_instances'),
        ('topic', 'conductor'))] == 1
    assert samples['target_info', (('binary', 'novalite-compute'),)] == 1
    assert not any(name.endswith('_created') for name, _labels in samples)
    # A compute reads no database: no servers-per-state gauge there.
    assert not any(name == 'novalite_servers' for name, _labels in samples)


def test_build_time_is_from_the_create_request_to_active(port):
    CONF.set_override('enabled', True, group='metrics')
    metrics.start_exporter('novalite-compute')
    created = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
    metrics.boot_active(created, created + datetime.timedelta(seconds=7))
    samples = _scrape(port)
    assert samples['novalite_build_duration_seconds_sum', ()] == 7
    assert samples['novalite_build_duration_seconds_bucket', (('le', '5.0'),)] == 0
    assert samples['novalite_build_duration_seconds_bucket', (('le', '10.0'),)] == 1


def test_started_once_per_process(port):
    CONF.set_override('enabled', True, group='metrics')
    metrics.start_exporter('novalite-compute')
    first = metrics._EXPORTER
    metrics.start_exporter('novalite-compute')
    assert metrics._EXPORTER is first


def test_a_port_in_use_leaves_the_daemon_running_without_metrics(port, caplog):
    CONF.set_override('enabled', True, group='metrics')
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', port))
        taken.listen()
        metrics.start_exporter('novalite-scheduler')
    assert metrics._metrics() is None
    assert 'cannot serve them on 127.0.0.1:%d' % port in caplog.text
    metrics.boots_started()  # still a no-op


def test_each_daemon_has_its_own_default_port():
    assert CONF.metrics.port is None
    ports = {binary: metrics.port_of(binary) for binary in (
        'novalite-all', 'novalite-api', 'novalite-conductor', 'novalite-scheduler',
        'novalite-compute')}
    assert len(set(ports.values())) == len(ports)
    assert ports['novalite-api'] == 9791


def _worker(count: int) -> None:
    metrics.boots_started(count)
    metrics.observe_rpc('conductor', 'build_instances', 'cast', 0.1)


def test_forked_workers_are_summed_on_the_masters_port(port):
    CONF.set_override('enabled', True, group='metrics')
    CONF.set_override('workers', 2, group='conductor')
    metrics.start_exporter('novalite-conductor')
    exporter = metrics._EXPORTER
    assert exporter is not None and exporter.multiprocess_dir is not None
    assert os.environ['PROMETHEUS_MULTIPROC_DIR'] == exporter.multiprocess_dir
    fork = multiprocessing.get_context('fork')
    workers = [fork.Process(target=_worker, args=(n,)) for n in (2, 3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    samples = _scrape(port)
    assert samples['novalite_boots_started_total', ()] == 5
    assert samples['novalite_rpc_duration_seconds_count', (
        ('kind', 'cast'), ('method', 'build_instances'), ('topic', 'conductor'))] == 2
    metrics.stop_exporter()
    assert 'PROMETHEUS_MULTIPROC_DIR' not in os.environ
    assert not os.path.exists(exporter.multiprocess_dir)


class _Incoming:
    def __init__(self, **attrs: object) -> None:
        self.__dict__.update(attrs)


def test_rpc_kind_is_call_when_the_sender_waits_for_a_reply():
    assert rpc.message_kind(_Incoming(reply_q='reply_abc')) == 'call'  # AMQP drivers
    assert rpc.message_kind(_Incoming(_reply_q=object())) == 'call'  # fake driver
    assert rpc.message_kind(_Incoming(reply_q=None)) == 'cast'
    assert rpc.message_kind(_Incoming()) == 'cast'


@pytest.fixture
def glance_at(port) -> Iterator[WSGIServer]:
    def app(environ, start_response):
        start_response('503 Service Unavailable', [('Content-Length', '4')])
        return [b'busy']

    server = WSGIServer(app)
    server.start()
    CONF.set_override('enabled', True, group='metrics')
    CONF.set_override('num_retries', 0, group='glance')
    glance.reset()
    metrics.start_exporter('novalite-compute')
    try:
        yield server
    finally:
        server.stop()
        CONF.clear_override('endpoint_override', group='glance')
        CONF.clear_override('num_retries', group='glance')
        glance.reset()


def test_glance_requests_are_timed_and_failures_counted(glance_at, port):
    context = nl_context.get_admin_context()
    CONF.set_override('endpoint_override', glance_at.url, group='glance')
    assert glance._send(context, 'GET', '/v2/images/x', {}).status_code == 503
    CONF.set_override('endpoint_override', 'http://127.0.0.1:%d' % _free_port(),
                      group='glance')
    with pytest.raises(glance.ks_exc.ConnectFailure):
        glance._send(context, 'GET', '/v2/images/x', {})
    samples = _scrape(port)
    errors = 'novalite_http_client_errors_total'
    for status_class in ('5xx', 'none'):
        assert samples[errors, (('method', 'GET'), ('service', 'glance'),
                                ('status_class', status_class))] == 1


def test_servers_per_state_is_read_once_per_cache_period(monkeypatch):
    reads = []

    def counted() -> tuple[dict[str, int], int]:
        reads.append(1)
        return {'active': 2, 'stopped': 1}, 0

    monkeypatch.setattr(metrics_collectors, 'servers_per_state', counted)
    collector = metrics_collectors.ServersCollector(3600)
    for _ in range(3):
        families = {family.name: family for family in collector.collect()}
    assert len(reads) == 1
    servers = {s.labels['vm_state']: s.value for s in families['novalite_servers'].samples}
    assert servers == {'active': 2, 'building': 0, 'error': 0, 'stopped': 1}


def test_servers_per_state_absent_while_the_databases_fail(monkeypatch):
    def failing() -> tuple[dict[str, int], int]:
        raise exception.NovaliteException('database down')

    monkeypatch.setattr(metrics_collectors, 'servers_per_state', failing)
    assert list(metrics_collectors.ServersCollector(0).collect()) == []
