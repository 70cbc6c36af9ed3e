"""What one boot and one delete cost the real Placement, without novalite around it.

novalite's share of a boot in Placement is two requests, made by the scheduler:
``GET /allocation_candidates`` and ``PUT /allocations/{uuid}`` (the claim); a delete is one
more, ``DELETE /allocations/{uuid}`` from the compute. This benchmark starts the real
Placement the way the devstack stack does (gunicorn, 1 worker, 8 threads, its own
MariaDB database), gives it compute-node providers, and makes exactly those requests with
novalite's own Placement client (``SchedulerReportClient``), C at a time, reading
Placement's CPU from /proc. Prints one JSON line::

    .venv/bin/python bench/placement_cost.py --boots 300 --concurrency 5 --nodes 2

``placement_cpu_ms`` per boot and per delete is the floor that Placement puts under
every figure of a boot storm: one Placement core serves at most 1000 / that many boots a
second, whatever the compute controller in front of it does.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from concurrent import futures

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import procstats  # noqa: E402
import scheduler_scale  # noqa: E402

from novalite import context as nl_context  # noqa: E402
from novalite import objects  # noqa: E402
from novalite.db import engine, migration  # noqa: E402
from novalite.scheduler.client import report  # noqa: E402
from tests.devstack.harness import backends  # noqa: E402
from tests.devstack.harness.placement import PlacementProcess  # noqa: E402

# m1.nano, as the boot storm asks for it, on hosts as big as the storm's fake ones.
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}
NODE = {'vcpus': 1024, 'memory_mb': 1024 * 1024, 'local_gb': 100000}


def _boot(client: report.SchedulerReportClient, ctx: object) -> str:
    consumer = str(uuid.uuid4())
    alloc_reqs, _summaries, version = client.get_allocation_candidates(
        ctx, RESOURCES, limit=1000)
    if not client.claim_resources(ctx, consumer, alloc_reqs[0], 'bench', 'bench',
                                  allocation_request_version=version):
        raise RuntimeError('Placement refused a claim')
    return consumer


def measure(placement: PlacementProcess, boots: int, concurrency: int) -> dict:
    client = report.SchedulerReportClient()
    ctx = nl_context.get_admin_context()
    for _ in range(3):  # first requests load Placement's code paths: not measured
        client.delete_allocation_for_instance(ctx, _boot(client, ctx))
    meter = procstats.CpuMeter({'placement': placement.process.pid})
    meter.start()
    with futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: client.get_allocation_candidates(ctx, RESOURCES, limit=1000),
                      range(boots)))
    candidates_cpu = meter.stop()['placement']
    meter.start()
    started = time.monotonic()
    with futures.ThreadPoolExecutor(concurrency) as pool:
        consumers = list(pool.map(lambda _: _boot(client, ctx), range(boots)))
    boot_wall = time.monotonic() - started
    boot_cpu = meter.stop()['placement']
    meter.start()
    with futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda c: client.delete_allocation_for_instance(ctx, c), consumers))
    delete_cpu = meter.stop()['placement']
    per_boot_ms = 1000 * boot_cpu / boots
    return {'placement_cpu_ms': {'per_boot': round(per_boot_ms, 2),
                                 'of_which_candidates': round(1000 * candidates_cpu / boots, 2),
                                 'per_delete': round(1000 * delete_cpu / boots, 2)},
            'boots_per_s_one_placement_core': round(1000 / per_boot_ms, 1),
            'boot_requests_wall_s_per_boot': round(boot_wall / boots, 4)}


def run(args: argparse.Namespace) -> dict:
    name = 'nlpc_%s' % uuid.uuid4().hex[:8]
    figures: dict = {'benchmark': 'placement_cost', 'boots': args.boots,
                     'concurrency': args.concurrency, 'nodes': args.nodes,
                     'backend': args.db, 'gunicorn': '%d workers x %d threads' % (
                         args.workers, args.threads)}
    placement = None
    db_name = name + '_placement'
    api_name = name + '_api'
    with tempfile.TemporaryDirectory(prefix='nl-pc-') as state_dir:
        try:
            url = backends.create_database(args.db, db_name)
            api_url = backends.create_database(args.db, api_name)
            migration.db_sync('api', url=api_url)
            placement = PlacementProcess(state_dir, url, scheduler_scale._free_port(),
                                         os.path.join(sys.prefix, 'bin'),
                                         os.path.join(state_dir, 'placement.log'),
                                         workers=args.workers, threads=args.threads)
            placement.setup()
            placement.start()
            scheduler_scale._configure(api_url, placement.url)
            # Providers only: no cell rows are needed, nothing here schedules.
            scheduler_scale.add_providers(
                placement.url, [{'uuid': str(uuid.uuid4()), 'host': 'pc%d' % i}
                                for i in range(args.nodes)], node_size=NODE)
            figures.update(measure(placement, args.boots, args.concurrency))
        finally:
            if placement is not None:
                placement.stop()
            engine.dispose_all()
            for db in (db_name, api_name):
                backends.drop_database(args.db, db)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--boots', type=int, default=300)
    parser.add_argument('--concurrency', type=int, default=5)
    parser.add_argument('--nodes', type=int, default=2, help='compute node providers')
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    parser.add_argument('--workers', type=int, default=1, help="Placement's gunicorn workers")
    parser.add_argument('--threads', type=int, default=8, help='threads per worker')
    args = parser.parse_args(argv)
    objects.register_all()
    yardstick = procstats.yardstick_ms()
    print(json.dumps({**run(args), 'yardstick_ms': yardstick}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
