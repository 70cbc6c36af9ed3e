"""How long novalite-all takes to say ``novalite-all ready``; prints one JSON line.

Four cases, each run ``--rounds`` times, the cases taking turns within each round:
``cold`` starts on a new state folder, ``warm`` on the folder of that round's cold run
(after a SIGTERM stop); with Neutron (the default) and with ``--no-network``. The order
of the cases flips every other round, so neither side always runs first::

    .venv/bin/python bench/allinone_ready.py --rounds 3

For each case: ``ready_s``, the seconds from the command's start (its process's start
time, as novalite-all prints in "started in X s") to its ready line; ``wall_s``, the same
seen from here (Popen to the line); ``stop_s``, from SIGTERM to its exit; ``cpu_s``, the
CPU its process tree had used when ready (Glance, Neutron's API and neutron-db-manage
included; the OVS/OVN daemons, which detach, not), and ``neutron_api_cpu_s`` Neutron's
API's part of it. Medians beside the runs. With Neutron, ``neutron_s`` is what
novalite-all logged of Neutron's start (OVS/OVN up, schema at its heads, API answering
with every chassis alive) and ``schema`` whether it was made or kept. The Neutron
databases the runs made are dropped at the end, and the state folders removed.

Only one OVS/OVN environment runs per machine: a run that finds it taken waits (up to
``--claim-wait`` seconds) and tries again.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import procstats  # noqa: E402
from novalite.allinone import network  # noqa: E402

BIN = os.path.dirname(sys.executable)
READY = 'novalite-all ready'
CLAIM_TAKEN = 'OVS/OVN environment'


def _run_once(state_dir: str, with_network: bool, port: int) -> dict[str, Any]:
    argv = [os.path.join(BIN, 'novalite-all'), '--state-dir', state_dir, '--port', str(port)]
    if not with_network:
        argv.append('--no-network')
    began = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip('\n'))
        if line.strip() == READY:
            break
    else:
        proc.wait()
        return {'failed': '\n'.join(lines)}
    wall = time.monotonic() - began
    ready = float(re.search(r'started in ([\d.]+) s', '\n'.join(lines)).group(1))
    cpu = {'cpu_s': round(procstats.cpu_seconds(proc.pid), 2)}
    if with_network:
        with open(os.path.join(state_dir, 'neutron', 'record.json')) as f:
            api = json.load(f)['pids']['neutron-api']
        cpu['neutron_api_cpu_s'] = round(procstats.cpu_seconds(api), 2)
    stopping = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    result: dict[str, Any] = {'ready_s': ready, 'wall_s': round(wall, 2),
                              'stop_s': round(time.monotonic() - stopping, 2), **cpu}
    if with_network:
        with open(os.path.join(state_dir, 'novalite-all.log')) as log:
            found = re.findall(r'Neutron up after ([\d.]+) s \(schema (\w+); ([^)]*)\)',
                               log.read())
        seconds, schema, steps = found[-1]
        result.update(neutron_s=float(seconds), schema=schema, neutron_steps=steps)
    return result


def run(state_dir: str, with_network: bool, port: int, claim_wait: float) -> dict[str, Any]:
    deadline = time.monotonic() + claim_wait
    while True:
        result = _run_once(state_dir, with_network, port)
        if CLAIM_TAKEN not in result.get('failed', '') or time.monotonic() > deadline:
            return result
        time.sleep(10)


def _drop_databases(state_dirs: list[str]) -> None:
    engine = sa.create_engine(network.DB_SERVER, isolation_level='AUTOCOMMIT',
                              poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            for state_dir in state_dirs:
                path = os.path.join(state_dir, 'neutron', 'database')
                if os.path.exists(path):
                    with open(path) as f:
                        conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % f.read().strip())
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--port', type=int, default=18774)
    parser.add_argument('--claim-wait', type=float, default=900.0, metavar='SECONDS')
    args = parser.parse_args()
    cases = [('network', 'cold'), ('no-network', 'cold'),
             ('network', 'warm'), ('no-network', 'warm')]
    runs: dict[str, list[dict[str, Any]]] = {'%s %s' % case: [] for case in cases}
    root = tempfile.mkdtemp(prefix='allinone-ready-')
    state_dirs: list[str] = []
    try:
        for i in range(args.rounds):
            order = cases if i % 2 == 0 else [cases[1], cases[0], cases[3], cases[2]]
            for kind, temperature in order:
                state_dir = os.path.join(root, '%s-%d' % (kind, i))
                if temperature == 'cold':
                    state_dirs.append(state_dir)
                result = run(state_dir, kind == 'network', args.port, args.claim_wait)
                runs['%s %s' % (kind, temperature)].append(result)
                print(kind, temperature, json.dumps(result), file=sys.stderr, flush=True)
    finally:
        _drop_databases(state_dirs)
        shutil.rmtree(root, ignore_errors=True)
    summary: dict[str, Any] = {}
    for case, results in runs.items():
        ok = [r for r in results if 'failed' not in r]
        summary[case] = {'runs': results}
        for key in ('ready_s', 'wall_s', 'stop_s', 'neutron_s', 'cpu_s',
                    'neutron_api_cpu_s'):
            values = [r[key] for r in ok if key in r]
            if values:
                summary[case][key + '_median'] = round(statistics.median(values), 2)
    print(json.dumps({'benchmark': 'allinone_ready', 'rounds': args.rounds,
                      'cases': summary, 'yardstick_ms': procstats.yardstick_ms()}))


if __name__ == '__main__':
    main()
