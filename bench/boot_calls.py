"""What one boot and one delete ask of the databases, the bus, Placement, Glance and
oslo.config, counted; prints one JSON line.

CPU figures swing with the machine (docs/performance.md: the two CPUs of one machine
need not even be as fast as each other); counts do not. This benchmark runs the
in-process stack of ``api_get_cpu.py`` (conductor, scheduler and two fake-driver
computes over ``fake://``, the real Placement in-process, a Glance double, the API's
paste app called from this thread) on throw-away databases, boots servers one at a time
and counts, per boot and per delete:

- SQL statements on novalite's databases by verb and table (``api: INSERT
  build_requests``), their transactions (COMMIT, ROLLBACK) and pool check-outs;
  Placement's own statements apart, as ``placement``;
- RPC casts and calls by method, and RPC clients built;
- HTTP requests to Placement and to Glance, by method;
- oslo.config option reads that missed its cache, and option registrations (each one
  empties that cache).

The client's status polls are not counted: a boot is its POST and what the services do
until the server is ACTIVE; a delete is its DELETE and what follows until the server
answers 404. Periodic tasks and heartbeats are set far apart so that they stay out of
the counts. Compare two versions of the code by running this in each::

    .venv/bin/python bench/boot_calls.py --boots 10
"""
from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.dirname(_HERE))
import api_get_cpu  # noqa: E402

_TABLE = re.compile(r'\b(?:FROM|INTO|UPDATE)\s+`?(\w+)', re.IGNORECASE)


class Counter:
    """Counts what the services do, except what this thread does while it polls."""

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()
        self.on = False
        self.polling = False
        self._main = threading.current_thread()

    def counting(self) -> bool:
        return self.on and not (self.polling and threading.current_thread() is self._main)

    def add(self, key: str) -> None:
        if self.counting():
            self.counts[key] += 1

    def take(self) -> collections.Counter:
        counts, self.counts = self.counts, collections.Counter()
        return counts

    def wrap(self, owner: Any, name: str, key: Callable[..., str]) -> None:
        """Count every call of ``owner.name`` under ``key(*args, **kwargs)``."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self.counting():
                self.counts[key(*args, **kwargs)] += 1
            return original(*args, **kwargs)
        setattr(owner, name, wrapper)


def instrument(counter: Counter, databases: dict[str, str], services: dict[str, str]
               ) -> None:
    """Count the libraries' entry points: SQL (per database of ``databases``, URL to
    name; any other is Placement's), RPC, HTTP (per service of ``services``, URL
    prefix to name) and oslo.config."""
    from keystoneauth1 import session as ks_session
    from oslo_config import cfg
    from oslo_messaging.rpc import client as rpc_client
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import Pool

    by_url: dict[str, str] = {}

    def database(conn: Any) -> str:
        url = conn.engine.url.render_as_string(hide_password=False)
        if url not in by_url:
            by_url[url] = next((name for name, known in databases.items()
                                if known.split('?')[0] == url.split('?')[0]), 'placement')
        return by_url[url]

    @event.listens_for(Engine, 'before_cursor_execute')
    def statement(conn, cursor, text, params, context, executemany) -> None:
        verb = text.split(None, 1)[0].upper()
        table = _TABLE.search(text)
        counter.add(('sql %s: %s %s' % (database(conn), verb, table.group(1) if table else ''))
                    .rstrip())

    @event.listens_for(Engine, 'commit')
    def commit(conn) -> None:
        counter.add('sql %s: COMMIT' % database(conn))

    @event.listens_for(Engine, 'rollback')
    def rollback(conn) -> None:
        counter.add('sql %s: ROLLBACK' % database(conn))

    @event.listens_for(Pool, 'checkout')
    def checkout(dbapi_connection, record, proxy) -> None:
        counter.add('sql pool check-outs (all databases)')

    counter.wrap(rpc_client._BaseCallContext, 'cast',
                 lambda self, ctxt, method, **kw: 'rpc cast %s' % method)
    counter.wrap(rpc_client._BaseCallContext, 'call',
                 lambda self, ctxt, method, **kw: 'rpc call %s' % method)
    counter.wrap(rpc_client.RPCClient, '__init__', lambda *a, **kw: 'rpc clients built')

    def http(self: Any, url: str, method: str, *args: Any, **kwargs: Any) -> str:
        # An adapter passes a path and the endpoint apart.
        full = url if '://' in url else (kwargs.get('endpoint_override') or '') + url
        service = next((name for prefix, name in services.items()
                        if full.startswith(prefix)),
                       (kwargs.get('endpoint_filter') or {}).get('service_type', 'other'))
        return 'http %s: %s' % (service, method)
    counter.wrap(ks_session.Session, 'request', http)
    counter.wrap(cfg.ConfigOpts, '_do_get', lambda *a, **kw: 'conf reads missing the cache')
    counter.wrap(cfg.ConfigOpts, 'register_opt', lambda *a, **kw: 'conf options registered')


def wait_gone(client: Any, server_id: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.request('GET', '/servers/%s' % server_id)[0] == 404:
            return
        time.sleep(0.05)
    raise RuntimeError('server %s was never deleted' % server_id)


def per_call(counts: collections.Counter, calls: int) -> dict[str, float]:
    return {key: round(value / calls, 2) for key, value in sorted(counts.items())}


def run(args: argparse.Namespace) -> dict:
    from oslo_log import log as logging

    from novalite.api.openstack import loader
    from novalite.conf import CONF
    from tests.functional.stack import Stack

    tmp = tempfile.mkdtemp(prefix='nlcalls-')
    urls, drop = api_get_cpu._databases(args.backend, tmp)

    class BenchStack(Stack):
        def db_url(self, name: str) -> str:
            return urls[name]

    quiet = {(None, 'debug'): False, (None, 'report_interval'): 3600,
             (None, 'periodic_interval'): 3600,
             ('conductor', 'lost_build_check_interval'): 3600}
    unlimited = {('quota', key): -1 for key in ('instances', 'cores', 'ram')}
    stack = BenchStack(tmp, overrides={**unlimited, **quiet})
    counter = Counter()
    done = False
    try:
        logging.register_options(CONF)
        stack.configure()
        CONF.set_override('log_file', os.path.join(tmp, 'services.log'))
        logging.setup(CONF, 'novalite')
        stack.start()
        instrument(counter, urls, {stack.placement.url: 'placement',
                                   stack.glance.server.url: 'glance'})
        client = api_get_cpu.InProcessClient(loader.load_app('osapi_compute'),
                                             'admin:admin', args.microversion)
        flavor = api_get_cpu._expect(*client.request('POST', '/flavors', {'flavor': {
            'name': 'm1.bench', 'ram': 64, 'vcpus': 1, 'disk': 1}}), 200, 'POST /flavors')
        flavor_id, image_id = flavor['flavor']['id'], stack.image['id']
        # Unmeasured first boots: first-use imports, pooled connections, caches.
        warm = [api_get_cpu.boot(client, flavor_id, image_id, 'warm-%d' % i)
                for i in range(2)]
        api_get_cpu.wait_settled(client, warm)
        ids = []
        counter.on = True
        for i in range(args.boots):
            ids.append(api_get_cpu.boot(client, flavor_id, image_id, 'bench-%d' % i))
            counter.polling = True
            api_get_cpu.wait_settled(client, ids[-1:])
            counter.polling = False
        time.sleep(args.settle)
        boots = counter.take()
        for server_id in ids:
            api_get_cpu._expect(*client.request('DELETE', '/servers/%s' % server_id),
                                204, 'DELETE')
            counter.polling = True
            wait_gone(client, server_id)
            counter.polling = False
        time.sleep(args.settle)
        deletes = counter.take()
        counter.on = False
        done = True
        return {'benchmark': 'boot_calls', 'boots': args.boots, 'backend': args.backend,
                'microversion': args.microversion,
                'per_boot': per_call(boots, args.boots),
                'per_delete': per_call(deletes, args.boots)}
    finally:
        counter.on = False
        stack.stop()
        drop()
        if done:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print('bench failed: see %s' % os.path.join(tmp, 'services.log'),
                  file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--boots', type=int, default=10)
    parser.add_argument('--backend', choices=('mysql', 'postgresql', 'sqlite'),
                        default='mysql')
    parser.add_argument('--microversion', default='2.47')
    parser.add_argument('--settle', type=float, default=0.5,
                        help='seconds to wait for trailing work after the last call')
    args = parser.parse_args(argv)
    print(json.dumps(run(args)), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
