"""Boot storm: N servers, C at a time, against any Compute API; prints one JSON line.

Each of C client threads boots a server (POST /servers), polls GET /servers/{id} every
``--poll`` seconds until it is ACTIVE or ERROR, and starts the next, until N were booted.
Then: GET /servers/detail with the N servers, the API's CPU per GET /servers/{id}, and
DELETE of every server with the time until each answers 404.

Against a running cloud::

    .venv/bin/python bench/boot_storm.py --url http://127.0.0.1:8774/v2.1 --token admin:admin \\
        --image cirros-tiny --flavor m1.nano --pid api=1234 --pid conductor=1240 ...

On a throw-away devstack-style stack (fake driver, MariaDB, RabbitMQ, real Placement and
Glance; Nova's measured layout: API 2 workers, 2 conductor and 2 scheduler workers)::

    .venv/bin/python bench/boot_storm.py --devstack --count 100 --concurrency 20

With ``--devstack`` the figures include the daemons' idle RSS and PSS and the time from
starting the novalite daemons to a first server ACTIVE. CPU seconds are summed over the
process trees named with ``--pid`` (with ``--devstack``: every novalite daemon and Placement).
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
from typing import Any

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import procstats  # noqa: E402
import pyspy  # noqa: E402

SETTLED = ('ACTIVE', 'ERROR')
# Servers the cloud depends on, measured beside it: MariaDB, PostgreSQL, RabbitMQ (Erlang).
INFRA_PROCESSES = ('mariadbd', 'mysqld', 'postgres', 'beam.smp')


class Client:
    """A Compute API client: one requests session per thread."""

    def __init__(self, url: str, token: str, microversion: str) -> None:
        self.url = url.rstrip('/')
        self.headers = {'X-Auth-Token': token,
                        'OpenStack-API-Version': 'compute %s' % microversion,
                        'Content-Type': 'application/json'}
        self._local = threading.local()

    def _session(self) -> requests.Session:
        if not hasattr(self._local, 'session'):
            self._local.session = requests.Session()
            self._local.session.headers.update(self.headers)
        return self._local.session

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self._session().request(method, self.url + path, timeout=120, **kwargs)

    def lookup(self, collection: str, key: str, name_or_id: str) -> str:
        resp = self.request('GET', '/%s' % collection)
        if resp.status_code != 200:
            raise SystemExit('GET /%s: %s %s' % (collection, resp.status_code, resp.text[:300]))
        items = resp.json()[key]
        for item in items:
            if name_or_id in (item['id'], item['name']):
                return item['id']
        raise SystemExit('no %s named %s' % (collection, name_or_id))


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float('nan')
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    return {'p50': round(percentile(values, 50), 3), 'p95': round(percentile(values, 95), 3),
            'max': round(max(values), 3) if values else float('nan')}


def cpu_budget(cpu: dict[str, float], other_cpu: float, boots: int,
               concurrency: int) -> dict[str, float | None]:
    """What this machine allowed the storm, whatever novalite's code had cost.

    Every process shares the machine's CPUs, so boots per second can be at most
    ``cpus / CPU seconds per boot``, counting everything. Leaving novalite's daemons
    out (Placement, the database and broker servers, Glance and the client kept)
    gives the ceiling the machine and those parts set on their own: a target above
    it was out of reach on this machine with novalite costing nothing. Each client
    boots one server after another, so (Little's law) the mean time from one POST to
    its server seen ACTIVE is at least ``concurrency / ceiling``.

    ``cpus`` are those this process may run on, which the devstack stack's daemons
    inherit: the machine's, unless the benchmark was started pinned.
    """
    cpus = len(os.sched_getaffinity(0))
    placement = cpu.get('placement', 0.0)
    novalite = sum(cpu.values()) - placement
    without = max((placement + other_cpu) / boots, 1e-9)
    whole = without + novalite / boots
    return {
        'cpus': cpus,
        'novalite_cpu_s_per_boot': round(novalite / boots, 4),
        'placement_cpu_s_per_boot': round(placement / boots, 4),
        'novalite_per_placement': round(novalite / placement, 2) if placement else None,
        'boots_per_s_ceiling': round(cpus / whole, 2),
        'boots_per_s_ceiling_without_novalite': round(cpus / without, 2),
        'min_mean_post_to_seen_s_without_novalite': round(concurrency * without / cpus, 3),
    }


# Seconds a server may take to settle (or to go, after DELETE) before it counts as stuck.
SETTLE_TIMEOUT = 300


def boot_one(client: Client, body: dict, poll: float) -> dict:
    """POST one server and poll it until ACTIVE or ERROR; a refused request or a
    connection error is a result too (``error``), not the end of the run."""
    started = time.monotonic()
    try:
        resp = client.request('POST', '/servers', data=json.dumps(body))
    except requests.RequestException as exc:
        return {'error': 'POST: %s' % exc}
    posted = time.monotonic()
    if resp.status_code != 202:
        return {'error': '%s %s' % (resp.status_code, resp.text[:200])}
    server_id = resp.json()['server']['id']
    while time.monotonic() - started < SETTLE_TIMEOUT:
        time.sleep(poll)
        try:
            server = client.request('GET', '/servers/%s' % server_id).json()['server']
        except requests.RequestException:
            continue  # a poll that failed is simply made again
        if server['status'] in SETTLED:
            return {'id': server_id, 'status': server['status'],
                    'post_s': posted - started, 'active_s': time.monotonic() - started}
    return {'id': server_id, 'status': 'STUCK', 'post_s': posted - started}


def storm(client: Client, count: int, concurrency: int, poll: float, image: str,
          flavor: str) -> tuple[list[dict], float]:
    """Boot ``count`` servers, ``concurrency`` at a time. :returns: results, wall time."""
    results: list[dict] = []
    lock = threading.Lock()
    numbers = iter(range(count))

    def worker() -> None:
        while True:
            with lock:
                number = next(numbers, None)
            if number is None:
                return
            body = {'server': {'name': 'storm-%d' % number, 'imageRef': image,
                               'flavorRef': flavor, 'networks': 'none'}}
            result = boot_one(client, body, poll)
            with lock:
                results.append(result)

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


def delete_all(client: Client, server_ids: list[str], concurrency: int,
               poll: float) -> list[float]:
    """DELETE each server, ``concurrency`` at a time; :returns: seconds until 404."""
    times: list[float] = []
    lock = threading.Lock()
    todo = list(server_ids)

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                server_id = todo.pop()
            started = time.monotonic()
            try:
                client.request('DELETE', '/servers/%s' % server_id)
                while client.request('GET', '/servers/%s' % server_id).status_code != 404:
                    if time.monotonic() - started > SETTLE_TIMEOUT:
                        break
                    time.sleep(poll)
            except requests.RequestException:
                continue
            with lock:
                times.append(time.monotonic() - started)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def timed(fn: Any, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.monotonic()
        fn()
        times.append(time.monotonic() - started)
    return times


def measure(client: Client, args: argparse.Namespace, pids: dict[str, int],
            figures: dict, others: dict[str, int] | None = None) -> None:
    """:param others: process trees measured apart from the services, beside the
        database and broker servers (with ``--devstack``: Glance)."""
    image = args.image
    if args.glance_url and not _looks_like_uuid(image):
        image = _glance_lookup(args, image)
    flavor = client.lookup('flavors', 'flavors', args.flavor)
    if args.warmup:
        warm, _ = storm(client, args.warmup, args.concurrency, args.poll, image, flavor)
        delete_all(client, [r['id'] for r in warm if 'id' in r], args.concurrency, args.poll)
        figures['warmup_boots'] = args.warmup
    profiler = pyspy.Profiler(pids, args.profile) if args.profile and pids else None
    meter = procstats.CpuMeter(pids)
    spread = procstats.SpreadMeter(pids)
    infra = procstats.CpuMeter({**procstats.pids_named(*INFRA_PROCESSES), **(others or {})})
    meter.start()
    spread.start()
    infra.start()
    client_cpu = time.process_time()
    deadlocks = procstats.innodb_deadlocks()
    results, wall = storm(client, args.count, args.concurrency, args.poll, image, flavor)
    client_cpu = time.process_time() - client_cpu
    cpu = meter.stop()
    cpu_spread = spread.stop()
    infra_cpu = infra.stop()
    if profiler is not None:
        profiles = {name: pyspy.top(stacks) for name, stacks in profiler.stop().items()}
        with open(os.path.join(args.profile, 'summary.json'), 'w') as f:
            json.dump(profiles, f, indent=1)
        figures['profile'] = {name: {'samples': p['samples'],
                                     'by_library_pct': dict(list(
                                         p['by_library_pct'].items())[:6])}
                              for name, p in profiles.items()}
    ok = [r for r in results if r.get('status') == 'ACTIVE']
    figures.update({
        'active': len(ok), 'error': sum(1 for r in results if r.get('status') == 'ERROR'),
        'stuck': sum(1 for r in results if r.get('status') == 'STUCK'),
        'refused': [r['error'] for r in results if 'error' in r][:3],
        'post_s': summary([r['post_s'] for r in results if 'post_s' in r]),
        'post_to_active_s': summary([r['active_s'] for r in ok]),
        'boots_per_s': round(len(ok) / wall, 2), 'wall_s': round(wall, 2),
    })
    if deadlocks is not None:
        # Server-wide: during a devstack storm, Placement's allocation writes.
        figures['innodb_deadlocks'] = procstats.innodb_deadlocks() - deadlocks
    if pids:
        figures['cpu_s'] = cpu
        # Per process of each tree (master first): do a daemon's workers share the work?
        figures['cpu_s_by_process'] = {name: values for name, values in cpu_spread.items()
                                       if len(values) > 1}
        figures['cpu_s_per_boot'] = round(sum(cpu.values()) / max(len(ok), 1), 3)
    # Not in the services' figure (Nova's was measured over its services): the database
    # and broker servers on this machine (whatever else uses them counts too), Glance
    # with --devstack, and the benchmark client, which share the same cores.
    infra_cpu['client'] = round(client_cpu, 3)
    figures['other_cpu_s'] = infra_cpu
    figures['other_cpu_s_per_boot'] = round(sum(infra_cpu.values()) / max(len(ok), 1), 3)
    if pids and ok:
        figures['cpu_budget'] = cpu_budget(cpu, sum(infra_cpu.values()), len(ok),
                                           args.concurrency)
    if pids:
        figures['rss_mb'] = {name: procstats.rss_mb(pid) for name, pid in pids.items()}
    detail = timed(lambda: client.request('GET', '/servers/detail').raise_for_status(), 5)
    figures['list_detail_s'] = {'servers': len(results), 'p50': round(
        statistics.median(detail), 4)}
    if ok:
        one = ok[0]['id']
        api = {k: v for k, v in pids.items() if k.startswith('api')}
        meter = procstats.CpuMeter(api)
        meter.start()
        gets = timed(lambda: client.request('GET', '/servers/%s' % one).raise_for_status(),
                     args.gets)
        spent = sum(meter.stop().values())
        figures['get_server'] = {'p50_s': round(statistics.median(gets), 4)}
        if api:
            figures['get_server']['api_cpu_ms'] = round(spent / args.gets * 1000, 2)
    deadlocks = procstats.innodb_deadlocks()
    deletes = delete_all(client, [r['id'] for r in results if 'id' in r], args.concurrency,
                         args.poll)
    figures['delete_to_404_s'] = summary(deletes)
    if deadlocks is not None:
        figures['innodb_deadlocks_deleting'] = procstats.innodb_deadlocks() - deadlocks


def _looks_like_uuid(value: str) -> bool:
    return len(value) == 36 and value.count('-') == 4


def _glance_lookup(args: argparse.Namespace, name: str) -> str:
    resp = requests.get(args.glance_url.rstrip('/') + '/v2/images?name=%s' % name,
                        headers={'X-Auth-Token': args.token}, timeout=30)
    images = resp.json().get('images', [])
    if not images:
        raise SystemExit('no image named %s in Glance' % name)
    return images[0]['id']


# -- the devstack-style stack ------------------------------------------------------------

DEVSTACK_CONF = {
    'DEFAULT': {'debug': False},
    'api': {'osapi_compute_workers': 2},
    'conductor': {'workers': 2},
    'scheduler': {'workers': 2},
    'quota': {'instances': -1, 'cores': -1, 'ram': -1},
    'fake_driver': {'vcpus': 1024, 'memory_mb': 1024 * 1024, 'local_gb': 100000},
}


def devstack_pids(stack: Any) -> dict[str, int]:
    pids = {name: daemon.pid for name, daemon in stack.daemons.items() if daemon.pid}
    pids['placement'] = stack.placement.process.pid
    return pids


def first_active(stack: Any, client: Client, args: argparse.Namespace) -> float:
    """Stop every novalite daemon, start them all again, and time until a server
    booted as soon as the API answers is ACTIVE."""
    for name in stack.daemons:
        stack.stop(name)
    started = time.monotonic()
    stack._start_daemons()  # the same order and readiness checks as up()
    flavor = client.lookup('flavors', 'flavors', args.flavor)
    body = {'server': {'name': 'first', 'imageRef': stack.image_id, 'flavorRef': flavor,
                       'networks': 'none'}}
    result = boot_one(client, body, 0.05)
    elapsed = time.monotonic() - started
    if result.get('status') == 'ACTIVE':
        delete_all(client, [result['id']], 1, 0.05)
    return elapsed


def run_devstack(args: argparse.Namespace) -> dict:
    from tests.devstack.harness import Stack
    figures: dict = {'target': 'devstack (fake driver, %s, RabbitMQ)' % args.db}
    with tempfile.TemporaryDirectory(prefix='nl-bench-') as state_dir:
        stack = Stack(state_dir, backend=args.db, conf=DEVSTACK_CONF,
                      computes=tuple(args.computes.split(',')),
                      placement_gunicorn=(args.placement_workers, args.placement_threads),
                      placement_isolation=args.placement_isolation)
        figures['placement_gunicorn'] = '%d workers x %d threads' % (
            args.placement_workers, args.placement_threads)
        figures['placement_isolation'] = args.placement_isolation
        try:
            stack.up()
            figures['stack_up_s'] = round(stack.timings['up'], 1)
            client = Client(stack.api_url + '/v2.1', args.token, args.microversion)
            figures['services_to_first_active_s'] = round(first_active(stack, client, args), 2)
            time.sleep(2)  # let start-up work settle before the idle figure
            pids = devstack_pids(stack)
            figures['idle_rss_mb'] = {name: procstats.rss_mb(pid) for name, pid in pids.items()}
            figures['idle_pss_mb'] = {name: procstats.pss_mb(pid) for name, pid in pids.items()}
            args.image = stack.image_id
            # Glance answers the API's image GET of every POST (its CPU is outside the
            # services' figure, as Nova's was; it shares the cores all the same).
            measure(client, args, pids, figures, {'glance': stack.glance.process.pid})
        finally:
            stack.down(check=False)
    return figures


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--url', help='Compute API endpoint (without --devstack)')
    parser.add_argument('--token', default='admin:admin')
    parser.add_argument('--microversion', default='2.47')
    parser.add_argument('--image', default='cirros-tiny', help='image id or name')
    parser.add_argument('--glance-url', help='to look an image name up')
    parser.add_argument('--flavor', default='m1.nano', help='flavor id or name')
    parser.add_argument('--count', type=int, default=20)
    parser.add_argument('--concurrency', type=int, default=5)
    parser.add_argument('--poll', type=float, default=0.25, help='status poll interval (s)')
    parser.add_argument('--gets', type=int, default=200,
                        help='GET /servers/{id} requests for the API CPU figure')
    parser.add_argument('--pid', action='append', default=[],
                        help='NAME=PID of a process tree to measure (repeatable)')
    parser.add_argument('--warmup', type=int, default=0,
                        help='boot and delete this many servers first, not measured')
    parser.add_argument('--profile', metavar='DIR',
                        help='py-spy every measured process during the storm; collapsed '
                             'stacks and summary.json into DIR (see bench/pyspy.py)')
    parser.add_argument('--devstack', action='store_true',
                        help='run against a throw-away devstack-style stack')
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    parser.add_argument('--computes', default='hostA,hostB')
    parser.add_argument('--placement-workers', type=int, default=1,
                        help="with --devstack: Placement's gunicorn workers")
    parser.add_argument('--placement-threads', type=int, default=8,
                        help='with --devstack: threads per Placement worker')
    from tests.devstack.harness.placement import ISOLATIONS
    parser.add_argument('--placement-isolation', choices=sorted(ISOLATIONS),
                        default='default',
                        help="with --devstack on MariaDB: Placement's transaction isolation "
                             "(default: the server's own, REPEATABLE READ)")
    args = parser.parse_args(argv)
    if not args.devstack and not args.url:
        parser.error('give --url or --devstack')
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    figures: dict = {'benchmark': 'boot_storm', 'count': args.count,
                     'concurrency': args.concurrency, 'poll_s': args.poll,
                     'yardstick_ms': procstats.yardstick_ms(),
                     'yardstick_ms_per_cpu': procstats.yardstick_ms_per_cpu(),
                     'db_roundtrip_ms': procstats.db_roundtrip_ms()}
    if args.devstack:
        figures.update(run_devstack(args))
    else:
        pids = dict((name, int(pid)) for name, pid in
                    (item.split('=', 1) for item in args.pid))
        figures['target'] = args.url
        measure(Client(args.url, args.token, args.microversion), args, pids, figures)
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
