"""``novalite-manage capacity`` on four hosts of different sizes, checked by booting.

One flavor (1 VCPU, 1024 MB, 10 GB) on hosts whose defaults are cpu ratio 4.0, ram
and disk ratio 1.0 and 512 MB reserved for the host:

- host-a: 1 CPU (4 VCPU), plenty of the rest: 4 fit, limited by VCPU;
- host-b: 3584 MB (3072 usable): 3 fit, limited by MEMORY_MB;
- host-c: big, but its compute service is disabled: 0, filter ComputeFilter;
- host-d: 20 GB of disk, in zone "edge": 2 fit, limited by DISK_GB.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from novalite.virt import fake
from tests.fixtures.databases import DatabaseFactory
from tests.functional.mariadb_stack import MariaDBStack, manage_in

VERSION = '2.53'
BIG = {'vcpus': 8, 'memory_mb': 8704, 'local_gb': 100}
SIZES = {
    'host-a': dict(BIG, vcpus=1),
    'host-b': dict(BIG, memory_mb=3584),
    'host-c': BIG,
    'host-d': dict(BIG, local_gb=20),
}
EXPECTED = {
    'host-a': (4, 'VCPU'),
    'host-b': (3, 'MEMORY_MB'),
    'host-c': (0, 'filter ComputeFilter'),
    'host-d': (2, 'DISK_GB'),
}


class SizedFakeDriver(fake.FakeDriver):
    """The fake driver with a host size of its own instead of ``[fake_driver]``'s."""

    def __init__(self, size: dict[str, int]) -> None:
        super().__init__()
        self.size = size

    def get_available_resource(self, nodename: str) -> dict[str, Any]:
        resources = super().get_available_resource(nodename)
        resources.update(self.size, disk_available_least=self.size['local_gb'])
        return resources


@pytest.fixture(scope='module')
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBStack]:
    tmp = tmp_path_factory.mktemp('capacity-stack')
    factory = DatabaseFactory('mysql', str(tmp))
    stack = MariaDBStack(str(tmp), factory, compute_hosts=tuple(SIZES),
                         overrides={('quota', 'instances'): 50})
    stack.driver_factory = lambda host: SizedFakeDriver(SIZES[host])
    try:
        stack.start()
        _disable(stack, 'host-c')
        _zone(stack, 'edge', 'host-d')
        resp = stack.request('POST', '/flavors', json={'flavor': {
            'name': 'm1.cap', 'id': 'cap1', 'ram': 1024, 'vcpus': 1, 'disk': 10}})
        assert resp.status_code == 200, resp.text
        yield stack
    finally:
        stack.stop()
        factory.cleanup()


def _disable(stack: MariaDBStack, host: str) -> None:
    services = stack.request('GET', '/os-services?host=%s&binary=novalite-compute' % host,
                             version=VERSION).json()['services']
    resp = stack.request('PUT', '/os-services/%s' % services[0]['id'], version=VERSION,
                         json={'status': 'disabled', 'disabled_reason': 'capacity test'})
    assert resp.status_code == 200, resp.text


def _zone(stack: MariaDBStack, zone: str, host: str) -> None:
    resp = stack.request('POST', '/os-aggregates', json={'aggregate': {
        'name': zone, 'availability_zone': zone}})
    assert resp.status_code == 200, resp.text
    resp = stack.request('POST', '/os-aggregates/%s/action' % resp.json()['aggregate']['id'],
                         json={'add_host': {'host': host}})
    assert resp.status_code == 200, resp.text


def _capacity(stack: MariaDBStack, *argv: str) -> tuple[int, dict]:
    rc, output = manage_in(stack, 'capacity', '--format', 'json', *argv)
    assert output.lstrip().startswith('{'), output
    return rc, json.loads(output[output.index('{'):])


def _by_host(answer: dict) -> dict[str, tuple[int, str]]:
    return {h['host']: (h['fits'], h['limited_by']) for h in answer['hosts']}


def _boot(stack: MariaDBStack, name: str) -> dict:
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': name, 'imageRef': stack.image['id'], 'flavorRef': 'cap1',
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    return stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                 timeout=60, version=VERSION)


def test_counts_per_host_and_what_limits_each(stack: MariaDBStack) -> None:
    rc, answer = _capacity(stack, '--flavor', 'm1.cap')
    assert rc == 0
    assert _by_host(answer) == EXPECTED
    assert answer['total'] == 9
    assert answer['flavor'] == 'm1.cap'
    assert {h['host']: h['zone'] for h in answer['hosts']}['host-d'] == 'edge'
    assert answer['count_requested'] is None and answer['fits_requested'] is None


def test_table_and_count_exit_codes(stack: MariaDBStack) -> None:
    rc, output = manage_in(stack, 'capacity', '--flavor', 'cap1', '--count', '9')
    assert rc == 0, output
    assert 'host-b' in output and 'MEMORY_MB' in output
    assert '9 more servers of flavor m1.cap fit.' in output
    assert '9 requested: they fit.' in output
    rc, output = manage_in(stack, 'capacity', '--flavor', 'cap1', '--count', '12')
    assert rc == 1, output
    assert 'they do not fit, 3 short' in output
    rc, answer = _capacity(stack, '--flavor', 'cap1', '--count', '10')
    assert rc == 1
    assert answer['count_requested'] == 10 and answer['fits_requested'] is False


def test_zone_and_aggregate_restrictions(stack: MariaDBStack) -> None:
    rc, answer = _capacity(stack, '--flavor', 'm1.cap', '--zone', 'edge')
    assert rc == 0
    assert _by_host(answer) == {
        'host-a': (0, 'filter AvailabilityZoneFilter'),
        'host-b': (0, 'filter AvailabilityZoneFilter'),
        'host-c': (0, 'filter ComputeFilter'),
        'host-d': (2, 'DISK_GB')}
    rc, answer = _capacity(stack, '--flavor', 'm1.cap', '--zone', 'nova')
    assert answer['total'] == 7
    rc, answer = _capacity(stack, '--flavor', 'm1.cap', '--aggregate', 'edge')
    assert rc == 0
    assert _by_host(answer)['host-a'] == (0, 'not in aggregate edge')
    assert answer['total'] == 2


def test_unknown_names_exit_2(stack: MariaDBStack) -> None:
    rc, output = manage_in(stack, 'capacity', '--flavor', 'no-such-flavor')
    assert rc == 2, output
    assert 'no-such-flavor' in output
    rc, output = manage_in(stack, 'capacity', '--flavor', 'cap1', '--zone', 'nowhere')
    assert rc == 2, output
    assert 'nowhere' in output
    rc, output = manage_in(stack, 'capacity', '--flavor', 'cap1', '--aggregate', 'none')
    assert rc == 2, output


def test_placement_unreachable_exits_3(stack: MariaDBStack, tmp_path: Any) -> None:
    config = tmp_path / 'unreachable.conf'
    config.write_text(stack.config_file.read_text().replace(
        stack.placement.url, 'http://127.0.0.1:9'))
    saved, stack.config_file = stack.config_file, config
    try:
        rc, output = manage_in(stack, 'capacity', '--flavor', 'cap1')
    finally:
        stack.config_file = saved
    assert rc == 3, output
    assert 'Placement' in output


def test_booting_that_many_fills_the_hosts_and_one_more_fails(stack: MariaDBStack) -> None:
    servers = [_boot(stack, 'cap-%d' % i) for i in range(9)]
    assert [s['status'] for s in servers] == ['ACTIVE'] * 9, [s.get('fault') for s in servers]
    placed: dict[str, int] = {}
    for server in servers:
        host = server['OS-EXT-SRV-ATTR:host']
        placed[host] = placed.get(host, 0) + 1
    assert placed == {host: fits for host, (fits, _) in EXPECTED.items() if fits}

    extra = _boot(stack, 'cap-extra')
    assert extra['status'] == 'ERROR'
    assert 'No valid host' in extra['fault']['message'], extra['fault']

    rc, answer = _capacity(stack, '--flavor', 'm1.cap', '--count', '1')
    assert rc == 1
    assert answer['total'] == 0
    assert _by_host(answer) == {host: (0, limit) for host, (_, limit) in EXPECTED.items()}
