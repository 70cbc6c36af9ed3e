"""Boot storms in pairs, with and without a network, on one stack with the real Neutron.

One devstack-style stack (fake driver, MariaDB, RabbitMQ, the real Placement, Glance and
Neutron on ML2/OVN) serves every run; the runs alternate ``networks: none`` and one port
on a network, ``--pairs`` times, so a slower or faster moment of the machine falls on
both kinds alike. For each run: boots per second, POST -> ACTIVE seen, and CPU seconds
per boot of novalite's daemons, Placement, Neutron's API (and OVN's daemons), and the
rest (MariaDB, RabbitMQ, Glance, the client). The ratios that do not depend on the
machine's speed: novalite's CPU per boot against Placement's and against Neutron's in
the same run, and what a port adds to novalite's CPU per boot.

    .venv/bin/python bench/network_storm.py --count 20 --concurrency 5 --pairs 2
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import boot_storm  # noqa: E402
import procstats  # noqa: E402


def _neutron_pids(stack: Any) -> dict[str, int]:
    """Neutron's API tree, and OVN's daemons (northd, the databases, the controllers)."""
    record = stack.neutron.record
    pids = {'neutron': stack.neutron.api_process.pid}
    ovn = {name: pid for name, pid in record['pids'].items()
           if name != 'neutron-api' and os.path.exists('/proc/%d' % pid)}
    return pids | {'ovn-' + name: pid for name, pid in ovn.items()}


def _group(cpu: dict[str, float]) -> dict[str, float]:
    """CPU by service; ``novalite`` is every novalite daemon, ``novalite_api`` the API
    alone (most of it the client's status polls, as many as a boot takes 0.25 s)."""
    groups = {'novalite': 0.0, 'novalite_api': 0.0, 'placement': 0.0, 'neutron': 0.0,
              'ovn': 0.0}
    for name, seconds in cpu.items():
        key = ('ovn' if name.startswith('ovn-') else name
               if name in ('placement', 'neutron') else 'novalite')
        groups[key] += seconds
        if name == 'api':
            groups['novalite_api'] += seconds
    return {k: round(v, 3) for k, v in groups.items()}


def one_run(stack: Any, client: boot_storm.Client, args: argparse.Namespace,
            networks: Any, pids: dict[str, int], others: dict[str, int]) -> dict:
    flavor = client.lookup('flavors', 'flavors', args.flavor)
    meter = procstats.CpuMeter(pids)
    infra = procstats.CpuMeter({**procstats.pids_named(*boot_storm.INFRA_PROCESSES),
                                **others})
    meter.start()
    infra.start()
    client_cpu = time.process_time()
    results, wall = _storm(client, args, stack.image_id, flavor, networks)
    client_cpu = time.process_time() - client_cpu
    groups = _group(meter.stop())
    other = sum(infra.stop().values()) + client_cpu
    ok = [r for r in results if r.get('status') == 'ACTIVE']
    boots = max(len(ok), 1)
    per_boot = {k: round(v / boots * 1000, 1) for k, v in groups.items()}
    per_boot['other'] = round(other / boots * 1000, 1)
    run = {'network': networks != 'none', 'active': len(ok),
           'error': sum(1 for r in results if r.get('status') == 'ERROR'),
           'boots_per_s': round(len(ok) / wall, 2),
           'post_to_active_s': boot_storm.summary([r['active_s'] for r in ok]),
           'cpu_ms_per_boot': per_boot,
           'novalite_per_placement': round(groups['novalite'] / groups['placement'], 2)
           if groups['placement'] else None}
    if networks != 'none' and groups['neutron']:
        run['novalite_per_neutron'] = round(groups['novalite'] / groups['neutron'], 2)
    boot_storm.delete_all(client, [r['id'] for r in results if 'id' in r],
                          args.concurrency, args.poll)
    return run


def _storm(client: boot_storm.Client, args: argparse.Namespace, image: str, flavor: str,
           networks: Any) -> tuple[list[dict], float]:
    original = boot_storm.boot_one

    def boot_one(client_: boot_storm.Client, body: dict, poll: float) -> dict:
        body['server']['networks'] = networks
        return original(client_, body, poll)
    boot_storm.boot_one = boot_one  # the storm's bodies say "none"; this run's choice
    try:
        return boot_storm.storm(client, args.count, args.concurrency, args.poll, image,
                                flavor)
    finally:
        boot_storm.boot_one = original


def summarize(runs: list[dict]) -> dict:
    def median(network: bool, key: str) -> float | None:
        values = [r['cpu_ms_per_boot'][key] for r in runs if r['network'] is network]
        return round(statistics.median(values), 1) if values else None
    with_net, without = median(True, 'novalite'), median(False, 'novalite')
    return {'novalite_ms_per_boot': {'without_network': without, 'with_network': with_net},
            'novalite_api_ms_per_boot': {'without_network': median(False, 'novalite_api'),
                                         'with_network': median(True, 'novalite_api')},
            'a_port_adds_novalite_ms': round(with_net - without, 1)
            if with_net is not None and without is not None else None,
            'neutron_ms_per_boot_with_network': median(True, 'neutron'),
            'placement_ms_per_boot': {'without_network': median(False, 'placement'),
                                      'with_network': median(True, 'placement')}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--count', type=int, default=20)
    parser.add_argument('--concurrency', type=int, default=5)
    parser.add_argument('--pairs', type=int, default=2)
    parser.add_argument('--poll', type=float, default=0.25)
    parser.add_argument('--flavor', default='m1.nano')
    parser.add_argument('--token', default='admin:admin')
    parser.add_argument('--microversion', default='2.47')
    args = parser.parse_args(argv)
    from tests.devstack.harness import Stack
    with tempfile.TemporaryDirectory(prefix='nl-bench-net-') as state_dir:
        stack = Stack(state_dir, conf=boot_storm.DEVSTACK_CONF, network=True,
                      placement_isolation='read-committed')
        try:
            stack.up()
            net = stack.neutron.api('POST', '/networks', json={'network': {
                'name': 'bench-net'}}).json()['network']
            stack.neutron.api('POST', '/subnets', json={'subnet': {
                'network_id': net['id'], 'ip_version': 4, 'cidr': '10.64.0.0/16'}})
            client = boot_storm.Client(stack.api_url + '/v2.1', args.token,
                                       args.microversion)
            pids = {**boot_storm.devstack_pids(stack), **_neutron_pids(stack)}
            others = {'glance': stack.glance.process.pid}
            runs = []
            for _ in range(args.pairs):
                for networks in ('none', [{'uuid': net['id']}]):
                    runs.append(one_run(stack, client, args, networks, pids, others))
                    print(json.dumps(runs[-1]), flush=True)
            print(json.dumps({'count': args.count, 'concurrency': args.concurrency,
                              'summary': summarize(runs)}))
        finally:
            stack.down(check=False)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
