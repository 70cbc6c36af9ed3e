"""Prometheus metrics of the all-in-one stack: boots, builds, RPC, Placement, Glance,
servers per state, read from the exporter's port as Prometheus would."""
from __future__ import annotations

import socket

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from novalite import metrics
from tests.functional.stack import Stack

VERSION = '2.47'


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    port = _free_port()
    stack = Stack(str(tmp_path_factory.mktemp('stack')), overrides={
        ('metrics', 'enabled'): True, ('metrics', 'port'): port,
        ('metrics', 'servers_cache_seconds'): 0})
    stack.start()
    metrics.start_exporter('novalite-all')
    stack.metrics_url = 'http://127.0.0.1:%d/metrics' % port
    try:
        yield stack
    finally:
        metrics.stop_exporter()
        stack.stop()


def _scrape(stack) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample, keyed by (name, sorted labels)."""
    resp = requests.get(stack.metrics_url, timeout=10)
    assert resp.status_code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(resp.text)
            for s in family.samples}


def _sum(samples, name, **labels) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(value for (n, sample_labels), value in samples.items()
               if n == name and set(labels.items()) <= set(sample_labels))


def _flavor(stack, name, ram):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': name, 'ram': ram, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, name):
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': name, 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


def test_boots_move_the_counters_histograms_and_servers_per_state(stack):
    small, huge = _flavor(stack, 'm1.metrics', 256), _flavor(stack, 'm1.toobig', 40000)
    before = _scrape(stack)

    active = [_boot(stack, small, 'metrics-%d' % i) for i in range(3)]
    failed = _boot(stack, huge, 'metrics-huge')
    for server_id in active:
        assert stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'),
                                     version=VERSION)['status'] == 'ACTIVE'
    assert stack.wait_for_status(failed, ('ACTIVE', 'ERROR'),
                                 version=VERSION)['status'] == 'ERROR'
    after = _scrape(stack)

    def moved(name, **labels):
        return _sum(after, name, **labels) - _sum(before, name, **labels)

    assert moved('novalite_boots_started_total') == 4
    assert moved('novalite_boots_active_total') == 3
    assert moved('novalite_boots_error_total', reason='NoValidHost') == 1
    assert moved('novalite_boots_error_total') == 1
    assert moved('novalite_build_duration_seconds_count') == 3
    assert moved('novalite_build_duration_seconds_sum') > 0
    # Each boot asks Placement for candidates (and claims); each asks Glance for its image.
    assert moved('novalite_http_client_duration_seconds_count', service='placement',
                 method='GET', status_class='2xx') >= 4
    assert moved('novalite_http_client_duration_seconds_count', service='placement',
                 method='PUT', status_class='2xx') >= 3
    assert moved('novalite_http_client_duration_seconds_count', service='glance',
                 method='GET', status_class='2xx') >= 4
    assert moved('novalite_http_client_errors_total') == 0
    # The conductor's build is a cast, the scheduler's selection a call.
    assert moved('novalite_rpc_duration_seconds_count', topic='conductor',
                 method='schedule_and_build_instances', kind='cast') == 4
    assert moved('novalite_rpc_duration_seconds_count', topic='scheduler',
                 method='select_destinations', kind='call') == 4
    assert moved('novalite_rpc_duration_seconds_count', topic='compute',
                 method='build_and_run_instance', kind='cast') == 3
    assert moved('novalite_servers', vm_state='active') == 3
    assert moved('novalite_servers', vm_state='error') == 1
    assert _sum(after, 'novalite_servers_cells_unanswered') == 0
    assert _sum(after, 'target_info', binary='novalite-all') == 1

    for server_id in active + [failed]:
        assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    for server_id in active + [failed]:
        stack.wait_for_deleted(server_id)
    gone = _scrape(stack)
    assert _sum(gone, 'novalite_servers', vm_state='active') == \
        _sum(before, 'novalite_servers', vm_state='active')
    assert _sum(gone, 'novalite_servers', vm_state='error') == \
        _sum(before, 'novalite_servers', vm_state='error')

