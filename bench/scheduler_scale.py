"""The scheduler at scale: select_destinations with 1,000 or 10,000 compute nodes.

Each node is simulated the way the scheduler sees a real one: a compute service and a
compute_nodes row in a cell database (MariaDB or PostgreSQL), and a resource provider
with VCPU, MEMORY_MB and DISK_GB inventory in the REAL Placement (gunicorn, its own
database). No compute process runs: the scheduler never talks to one.

The scheduler runs in this process (SchedulerManager, the daemon's endpoint) so that its
time can be split: the whole ``select_destinations``, the part spent waiting for
Placement (allocation candidates and the claim), and the rest (cell queries, HostStates,
filters, weighers). Prints one JSON line per node count::

    .venv/bin/python bench/scheduler_scale.py --nodes 1000 --nodes 10000 --requests 50
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent import futures
from typing import Any

import requests
import sqlalchemy as sa
from keystoneauth1 import loading as ks_loading
from oslo_utils import timeutils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import procstats  # noqa: E402

from novalite import context as nl_context  # noqa: E402
from novalite import objects  # noqa: E402
from novalite.conf import CONF  # noqa: E402
from novalite.db import engine, migration  # noqa: E402
from novalite.db.main import models  # noqa: E402
from novalite.scheduler import manager  # noqa: E402
from novalite.scheduler.client import report  # noqa: E402
from tests.devstack.harness import backends  # noqa: E402
from tests.devstack.harness.placement import PlacementProcess  # noqa: E402

NODE = {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000}
PLACEMENT_HEADERS = {'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement 1.39'}


class TimedReportClient(report.SchedulerReportClient):
    """The real Placement client, adding up the wall time of its HTTP requests."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0
        self.calls = 0

    def _request(self, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return super()._request(*args, **kwargs)
        finally:
            self.seconds += time.monotonic() - started
            self.calls += 1


def add_nodes(cell_url: str, placement_url: str, count: int, workers: int) -> None:
    """``count`` compute services and nodes in the cell, and their providers."""
    now = timeutils.utcnow()
    nodes = [{'uuid': str(uuid.uuid4()), 'host': 'sim%05d' % i} for i in range(count)]
    db = engine.get_engine(cell_url)
    with db.begin() as conn:
        for start in range(0, count, 1000):
            chunk = nodes[start:start + 1000]
            conn.execute(sa.insert(models.Service.__table__), [{
                'uuid': str(uuid.uuid4()), 'host': n['host'], 'binary': 'novalite-compute',
                'topic': 'compute', 'report_count': 1, 'disabled': False,
                'forced_down': False, 'last_seen_up': now, 'created_at': now,
                'deleted': 0, 'version': 1} for n in chunk])
        service_ids = {host: id_ for host, id_ in conn.execute(
            sa.select(models.Service.host, models.Service.id))}
        for start in range(0, count, 1000):
            chunk = nodes[start:start + 1000]
            conn.execute(sa.insert(models.ComputeNode.__table__), [{
                'uuid': n['uuid'], 'service_id': service_ids[n['host']], 'host': n['host'],
                'hypervisor_hostname': n['host'], 'hypervisor_type': 'fake',
                'hypervisor_version': 1, 'cpu_info': '{}', 'vcpus_used': 0,
                'memory_mb_used': 0, 'local_gb_used': 0, 'free_ram_mb': NODE['memory_mb'],
                'free_disk_gb': NODE['local_gb'], 'running_vms': 0, 'current_workload': 0,
                'disk_available_least': NODE['local_gb'], 'stats': '{}',
                'supported_instances': '[["x86_64", "fake", "hvm"]]',
                'cpu_allocation_ratio': 4.0, 'ram_allocation_ratio': 1.0,
                'disk_allocation_ratio': 1.0, 'mapped': 1, 'created_at': now, 'deleted': 0,
                **{k: v for k, v in NODE.items()}} for n in chunk])

    add_providers(placement_url, nodes, workers)


def add_providers(placement_url: str, nodes: list[dict], workers: int = 8,
                  node_size: dict | None = None) -> None:
    """A resource provider with VCPU, MEMORY_MB and DISK_GB inventory for each of
    ``nodes`` (``{'uuid', 'host'}``), as a compute host's resource tracker reports it."""
    size = node_size or NODE
    local = threading.local()

    def provider(node: dict) -> None:
        session = getattr(local, 'session', None)
        if session is None:
            session = local.session = requests.Session()
            session.headers.update(PLACEMENT_HEADERS)
        resp = session.post(placement_url + '/resource_providers',
                            json={'uuid': node['uuid'], 'name': node['host']}, timeout=60)
        resp.raise_for_status()
        resp = session.put(placement_url + '/resource_providers/%s/inventories' % node['uuid'],
                           json={'resource_provider_generation': 0, 'inventories': {
                               'VCPU': {'total': size['vcpus'], 'allocation_ratio': 4.0},
                               'MEMORY_MB': {'total': size['memory_mb']},
                               'DISK_GB': {'total': size['local_gb']}}}, timeout=60)
        resp.raise_for_status()

    with futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(provider, nodes))


def spec() -> Any:
    flavor = objects.Flavor(id=1, flavorid='bench', name='bench', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    return objects.RequestSpec(instance_uuid=str(uuid.uuid4()), flavor=flavor,
                               num_instances=1, project_id='bench', user_id='bench')


def run(count: int, requests_: int, backend: str, workers: int,
        profile: bool = False) -> dict:
    name = 'nlbs_%s' % uuid.uuid4().hex[:8]
    dbs = {label: '%s_%s' % (name, label) for label in ('api', 'cell', 'placement')}
    urls: dict[str, str] = {}
    placement = None
    figures: dict = {'benchmark': 'scheduler_scale', 'nodes': count, 'requests': requests_,
                     'backend': backend}
    with tempfile.TemporaryDirectory(prefix='nl-sched-') as state_dir:
        try:
            for label, db_name in dbs.items():
                urls[label] = backends.create_database(backend, db_name)
            migration.db_sync('api', url=urls['api'])
            migration.db_sync('main', url=urls['cell'])
            placement = PlacementProcess(state_dir, urls['placement'], _free_port(),
                                         os.path.join(sys.prefix, 'bin'),
                                         os.path.join(state_dir, 'placement.log'))
            placement.setup()
            placement.start()
            _configure(urls['api'], placement.url)
            ctx = nl_context.get_admin_context()
            objects.CellMapping(ctx, uuid=nl_context.CELL0_UUID, name='cell0',
                                transport_url='none:///',
                                database_connection=urls['cell']).create()
            objects.CellMapping(ctx, uuid=str(uuid.uuid4()), name='cell1',
                                transport_url='none:///',
                                database_connection=urls['cell']).create()
            started = time.monotonic()
            add_nodes(urls['cell'], placement.url, count, workers)
            figures['populate_s'] = round(time.monotonic() - started, 1)
            if profile:
                import cProfile
                import pstats
                profiler = cProfile.Profile()
                figures.update(profiler.runcall(_measure, ctx, requests_, placement))
                stats = pstats.Stats(profiler, stream=sys.stderr)
                stats.sort_stats('cumulative').print_stats(40)
                stats.sort_stats('tottime').print_stats(30)
            else:
                figures.update(_measure(ctx, requests_, placement))
        finally:
            if placement is not None:
                placement.stop()
            engine.dispose_all()
            for db_name in dbs.values():
                backends.drop_database(backend, db_name)
    return figures


def _measure(ctx: Any, count: int, placement: PlacementProcess) -> dict:
    client = TimedReportClient()
    scheduler = manager.SchedulerManager(reportclient=client)
    rss_before = procstats.rss_mb(os.getpid())[0]
    totals, placement_s, placement_calls = [], [], []
    hosts = set()
    placement_cpu = procstats.CpuMeter({'placement': placement.process.pid})
    own_cpu = procstats.CpuMeter({'scheduler': os.getpid()})
    placement_cpu.start()
    own_cpu.start()
    for _ in range(count):
        request = spec()
        client.seconds, client.calls = 0.0, 0
        started = time.monotonic()
        selections = scheduler.select_destinations(ctx, request, [request.instance_uuid],
                                                   return_alternates=True)
        totals.append(time.monotonic() - started)
        placement_s.append(client.seconds)
        placement_calls.append(client.calls)
        hosts.add(selections[0][0].service_host)
    spent_placement = placement_cpu.stop()['placement']
    spent_own = own_cpu.stop()['scheduler']
    total_p50 = statistics.median(totals)
    return {
        'select_destinations_s': {'p50': round(total_p50, 4),
                                  'p95': round(sorted(totals)[int(0.95 * (count - 1))], 4),
                                  'first': round(totals[0], 4)},
        'placement_wait_s_p50': round(statistics.median(placement_s), 4),
        'placement_share': round(sum(placement_s) / sum(totals), 2),
        'placement_requests_per_select': statistics.median(placement_calls),
        'cpu_s_per_select': {'scheduler': round(spent_own / count, 4),
                             'placement': round(spent_placement / count, 4)},
        'distinct_hosts_chosen': len(hosts),
        'scheduler_rss_mb': {'before': rss_before,
                             'after': procstats.rss_mb(os.getpid())[0]},
    }


def _configure(api_url: str, placement_url: str) -> None:
    CONF([], project='novalite', default_config_files=[])
    CONF.set_override('connection', api_url, group='api_database')
    # The simulated hosts never heartbeat: populating 10,000 takes minutes, and a
    # service seen longer ago than this would be down for ComputeFilter.
    CONF.set_override('service_down_time', 24 * 3600)
    CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='placement')
    CONF.set_override('auth_type', 'admin_token', group='placement')
    CONF.set_override('token', 'admin', group='placement')
    CONF.set_override('endpoint', placement_url, group='placement')


def _free_port() -> int:
    from novalite.allinone.glance import free_port
    return free_port()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--nodes', type=int, action='append',
                        help='compute nodes to simulate (repeatable; default 1000)')
    parser.add_argument('--requests', type=int, default=50,
                        help='select_destinations calls to time')
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    parser.add_argument('--workers', type=int, default=8,
                        help='client threads that create the providers')
    parser.add_argument('--profile', action='store_true',
                        help='print a cProfile of the timed calls to stderr')
    args = parser.parse_args(argv)
    objects.register_all()
    for count in args.nodes or [1000]:
        print(json.dumps(run(count, args.requests, args.db, args.workers, args.profile)),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
