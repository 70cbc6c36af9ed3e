"""One boot at a time, two trees side by side: the latency of POST /servers and of a
boot to ACTIVE, base and head alternated in one run; prints one JSON line.

Each tree runs the functional tests' all-in-one stack (SQLite, fake:// bus, in-process
Placement, libvirt's test driver, the Glance double) in a process of its own, with its
tree first on ``PYTHONPATH``. The booting project has a quota (instances 10, so every
create counts its usage, and with session 12's change, locks the project's row). Each
round boots one server on each stack (the order flips every round, so neither always
goes first), waits for ACTIVE, deletes it and waits for 404::

    git archive BASE | tar -x -C /tmp/base
    .venv/bin/python bench/quota_boot_latency.py --base /tmp/base --rounds 40

With ``--devstack`` each tree runs a devstack-style stack instead (MariaDB, RabbitMQ,
real Placement and Glance, fake driver, two API worker processes), its daemons started
with its tree on ``PYTHONPATH``; both stacks run at once.

``post_s`` is the POST's answer time, ``active_s`` from the POST to the first GET that
shows ACTIVE (polled every 20 ms). Medians and the head/base ratios beside the runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import requests

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT_TOKEN = 'bench:bench-quota'
ADMIN = {'X-Auth-Token': 'admin:admin'}

# Run in the child with its tree first on sys.path: start the stack, say where it is,
# and live until stdin closes.
CHILD = '''
import json, sys, tempfile
from tests.functional.stack import Stack
with tempfile.TemporaryDirectory(prefix='quota-bench-') as state_dir:
    stack = Stack(state_dir).start()
    print(json.dumps({'api': stack.api, 'image': stack.image['id']}), flush=True)
    sys.stdin.read()
    stack.stop()
'''


DEVSTACK_CONF = {
    'DEFAULT': {'debug': False},
    'api': {'osapi_compute_workers': 2},
}


class FunctionalStack:
    """The functional tests' stack of one tree, in a child process."""

    def __init__(self, tree: str) -> None:
        env = dict(os.environ, PYTHONPATH=tree)
        self.proc = subprocess.Popen([sys.executable, '-c', CHILD], cwd=tree, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        info = json.loads(self.proc.stdout.readline())
        self.api, self.image = info['api'], info['image']

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class DevstackStack:
    """A devstack-style stack whose daemons run one tree (its state in a temporary
    folder, removed with the stack)."""

    def __init__(self, tree: str) -> None:
        from tests.devstack.harness import Stack
        self.state_dir = tempfile.mkdtemp(prefix='quota-bench-')
        # The daemons (and novalite-manage's migrations) inherit the environment.
        saved = os.environ.get('PYTHONPATH')
        os.environ['PYTHONPATH'] = tree
        try:
            self.stack = Stack(self.state_dir, conf=DEVSTACK_CONF).up()
        finally:
            if saved is None:
                os.environ.pop('PYTHONPATH')
            else:
                os.environ['PYTHONPATH'] = saved
        self.api, self.image = self.stack.api_url + '/v2.1', self.stack.image_id

    def stop(self) -> None:
        self.stack.down(check=False)
        shutil.rmtree(self.state_dir, ignore_errors=True)


class Side:
    """One tree's stack and the client of its API."""

    def __init__(self, name: str, stack: FunctionalStack | DevstackStack) -> None:
        self.name = name
        self.stack = stack
        self.api, self.image = stack.api, stack.image
        self.http = requests.Session()
        self.http.headers['OpenStack-API-Version'] = 'compute 2.47'  # networks: none
        self.flavor = self._post('/flavors', {'flavor': {
            'name': 'bench', 'ram': 128, 'vcpus': 1, 'disk': 1}}, ADMIN).json()['flavor']['id']
        self.http.put(self.api + '/os-quota-sets/bench-quota', headers=ADMIN, timeout=30,
                      json={'quota_set': {'instances': 10}}).raise_for_status()

    def _post(self, path: str, body: dict, headers: dict) -> requests.Response:
        resp = self.http.post(self.api + path, json=body, headers=headers, timeout=30)
        resp.raise_for_status()
        return resp

    def boot_once(self) -> dict[str, float]:
        headers = {'X-Auth-Token': PROJECT_TOKEN}
        start = time.perf_counter()
        resp = self._post('/servers', {'server': {
            'name': 'b', 'imageRef': self.image, 'flavorRef': self.flavor,
            'networks': 'none'}}, headers)
        posted = time.perf_counter()
        server = resp.json()['server']['id']
        while True:
            status = self.http.get('%s/servers/%s' % (self.api, server), headers=headers,
                                   timeout=30).json()['server']['status']
            if status in ('ACTIVE', 'ERROR'):
                break
            time.sleep(0.02)
        active = time.perf_counter()
        assert status == 'ACTIVE', status
        self.http.delete('%s/servers/%s' % (self.api, server), headers=headers, timeout=30)
        while self.http.get('%s/servers/%s' % (self.api, server), headers=headers,
                            timeout=30).status_code != 404:
            time.sleep(0.02)
        return {'post_s': posted - start, 'active_s': active - start}

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--base', required=True, help='an export of the base tree')
    parser.add_argument('--head', default=HERE, help='the head tree (default: this one)')
    parser.add_argument('--rounds', type=int, default=40)
    parser.add_argument('--warmup', type=int, default=3, help='rounds not counted')
    parser.add_argument('--devstack', action='store_true',
                        help='devstack-style stacks (MariaDB) instead of functional ones')
    args = parser.parse_args()
    kind = DevstackStack if args.devstack else FunctionalStack
    sides: list[Side] = []
    runs: dict[str, list[dict[str, float]]] = {'base': [], 'head': []}
    try:
        for name in ('base', 'head'):
            sides.append(Side(name, kind(os.path.abspath(getattr(args, name)))))
        for index in range(args.warmup + args.rounds):
            for side in (sides if index % 2 else sides[::-1]):
                figures = side.boot_once()
                if index >= args.warmup:
                    runs[side.name].append(figures)
    finally:
        for side in sides:
            side.stack.stop()
    medians = {name: {key: round(statistics.median(r[key] for r in rows), 4)
                      for key in ('post_s', 'active_s')} for name, rows in runs.items()}
    print(json.dumps({
        'stacks': 'devstack (MariaDB)' if args.devstack else 'functional (SQLite)',
        'rounds': args.rounds, 'median': medians,
        'ratio_head_base': {key: round(medians['head'][key] / medians['base'][key], 3)
                            for key in ('post_s', 'active_s')},
    }))


if __name__ == '__main__':
    main()
