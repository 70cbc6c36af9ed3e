"""Where one boot's time goes, hop by hop; prints one JSON line.

Starts a throw-away devstack-style stack (fake driver, MariaDB, RabbitMQ, real Placement
and Glance) with ``[DEFAULT] log_boot_hops = true``, boots ``--count`` servers one after
the other, and lines up the hop lines every daemon logged for each server (their clocks
are this machine's). For each step between two hops it prints the median and p95 over
the servers, in milliseconds::

    .venv/bin/python bench/boot_hops.py --count 20

With ``--concurrency C`` C client threads boot at once, each one server after the other
(the layout of ``boot_storm.py``): the steps then show which hop the boots queue at.

The hops are taken at the boundaries only, not inside the flow: the API's create
handler (``api.received`` as it begins, ``api.answered`` once the build requests are
written and the conductor cast sent) and the RPC dispatcher of each service, as a boot
message arrives and as its endpoint returns (``<topic>.<method>`` and
``<topic>.<method>.done``). In order: the client's POST → api.received (HTTP,
middleware, body validation, policy, flavor lookup before it) → api.answered (image,
quota, API-DB rows, cast) → client.answered → conductor.schedule_and_build_instances →
scheduler.select_destinations → .done (Placement candidates, HostStates, filters,
weighers, claim) → conductor ...done (instance created in its cell, cast to the host) →
compute.build_and_run_instance (→ .done at once: the build runs on its own thread) →
conductor.active_save → .done (the compute's save that makes the server ACTIVE, after
claim, networks and spawn) → the client's poll sees ACTIVE. A reschedule adds
conductor.build_instances. See docs/boot-path.md.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import boot_storm  # noqa: E402
import procstats  # noqa: E402

HOP_LINE = re.compile(r'boot hop (\S+) (\S+) (\d+\.\d+)')


def read_hops(log_dir: str) -> dict[str, dict[str, float]]:
    """{instance uuid: {hop: wall-clock time}} from every log of the stack."""
    hops: dict[str, dict[str, float]] = {}
    for path in glob.glob(os.path.join(log_dir, '*.log')):
        with open(path, errors='replace') as log:
            for line in log:
                match = HOP_LINE.search(line)
                if match:
                    name, uuid, when = match.groups()
                    hops.setdefault(uuid, {}).setdefault(name, float(when))
    return hops


def boot_sequentially(client: boot_storm.Client, count: int, image: str, flavor: str,
                      poll: float, concurrency: int = 1) -> dict[str, dict[str, float]]:
    """Boot ``count`` servers, ``concurrency`` at a time, each client thread one after
    the other; the client's own hops for each."""
    seen: dict[str, dict[str, float]] = {}
    numbers = iter(range(count))
    lock = threading.Lock()

    def next_number() -> int | None:
        with lock:
            return next(numbers, None)

    threads = [threading.Thread(target=_boot_until_done,
                                args=(client, next_number, image, flavor, poll, seen))
               for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    boot_storm.delete_all(client, list(seen), max(2, concurrency), poll)
    return seen


def _boot_until_done(client: boot_storm.Client, next_number, image: str, flavor: str,
                     poll: float, seen: dict[str, dict[str, float]]) -> None:
    while (number := next_number()) is not None:
        body = {'server': {'name': 'hops-%d' % number, 'imageRef': image,
                           'flavorRef': flavor, 'networks': 'none'}}
        posted = time.time()
        resp = client.request('POST', '/servers', data=json.dumps(body))
        answered = time.time()
        resp.raise_for_status()
        server_id = resp.json()['server']['id']
        while True:
            server = client.request('GET', '/servers/%s' % server_id).json()['server']
            if server['status'] in boot_storm.SETTLED:
                break
            time.sleep(poll)
        seen[server_id] = {'client.post': posted, 'client.answered': answered,
                           'client.active_seen': time.time()}


def steps(per_instance: dict[str, dict[str, float]]) -> list[dict]:
    """Median and p95 of each step between consecutive hops (ordered by time)."""
    durations: dict[tuple[str, str], list[float]] = {}
    order: dict[tuple[str, str], float] = {}
    for hops in per_instance.values():
        ordered = sorted(hops.items(), key=lambda item: item[1])
        start = ordered[0][1]
        for (name_a, at_a), (name_b, at_b) in zip(ordered, ordered[1:], strict=False):
            key = (name_a, name_b)
            durations.setdefault(key, []).append((at_b - at_a) * 1000)
            order.setdefault(key, at_a - start)
    result = []
    for key in sorted(durations, key=lambda k: order[k]):
        values = durations[key]
        result.append({'from': key[0], 'to': key[1], 'n': len(values),
                       'p50_ms': round(statistics.median(values), 1),
                       'p95_ms': round(boot_storm.percentile(values, 95), 1)})
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--count', type=int, default=20)
    parser.add_argument('--poll', type=float, default=0.02,
                        help='status poll interval (s); short, to see ACTIVE early')
    parser.add_argument('--concurrency', type=int, default=1,
                        help='client threads booting at once (default 1: one boot at a '
                             'time, nothing queued behind another)')
    from tests.devstack.harness.placement import ISOLATIONS
    parser.add_argument('--placement-isolation', choices=sorted(ISOLATIONS),
                        default='default',
                        help="Placement's transaction isolation on MariaDB (as boot_storm.py)")
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    args = parser.parse_args(argv)

    from tests.devstack.harness import Stack
    conf = dict(boot_storm.DEVSTACK_CONF)
    conf['DEFAULT'] = dict(conf['DEFAULT'], log_boot_hops=True)
    with tempfile.TemporaryDirectory(prefix='nl-hops-') as state_dir:
        stack = Stack(state_dir, backend=args.db, conf=conf,
                      placement_isolation=args.placement_isolation)
        try:
            stack.up()
            client = boot_storm.Client(stack.api_url + '/v2.1', 'admin:admin', '2.47')
            flavor = client.lookup('flavors', 'flavors', 'm1.nano')
            # A first boot warms every daemon's caches and connections: not counted.
            boot_sequentially(client, 1, stack.image_id, flavor, args.poll)
            seen = boot_sequentially(client, args.count, stack.image_id, flavor, args.poll,
                                     args.concurrency)
            logged = read_hops(stack.log_dir)
        finally:
            stack.down(check=False)
    per_instance = {uuid: {**logged.get(uuid, {}), **client_hops}
                    for uuid, client_hops in seen.items()}
    totals = [(h['client.active_seen'] - h['client.post']) * 1000
              for h in per_instance.values()]
    print(json.dumps({'benchmark': 'boot_hops', 'count': args.count,
                      'concurrency': args.concurrency, 'poll_s': args.poll,
                      'placement_isolation': args.placement_isolation,
                      'yardstick_ms': procstats.yardstick_ms(),
                      'yardstick_ms_per_cpu': procstats.yardstick_ms_per_cpu(),
                      'db_roundtrip_ms': procstats.db_roundtrip_ms(),
                      'post_to_active_seen_ms_p50': round(statistics.median(totals), 1),
                      'steps': steps(per_instance)}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
