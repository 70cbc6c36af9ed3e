"""The API's CPU per status poll: GET /servers/{id} (ACTIVE, and still a BuildRequest),
GET /servers/detail with N servers, and POST /servers; prints one JSON line.

In-process (the default): throw-away MariaDB databases (API, cell0, cell1) named
``nlbench_*`` and dropped afterwards, the all-in-one stack of the functional tests on
them (conductor, scheduler and fake-driver computes over ``fake://``, the real Placement
in-process, a Glance double), and the API's paste pipeline loaded from api-paste.ini as
the daemon loads it. The paste app is called directly with webob requests from this
thread, so ``time.thread_time`` counts exactly the API's work per show and create (the
other services run on other threads and do not count). A list queries cell0 and cell1
on worker threads: it is measured with the process's CPU, after every service of the
stack was stopped::

    .venv/bin/python bench/api_get_cpu.py --servers 100 --gets 300
    .venv/bin/python bench/api_get_cpu.py --profile          # cProfile top 30 of the GETs
    .venv/bin/python bench/api_get_cpu.py --http             # also through the HTTP server

``cpu_ms`` is the median of five rounds' means, ``cpu_ms_min`` the least (the machine is
shared: the least is the round other processes disturbed least). With ``--http`` the
same app is served by novalite-api's HTTP server (waitress) in this process and a client
process sends the GETs: ``http.get_active.cpu_ms`` is then what the daemon spends per
status poll, parsing the request and handing it to a thread included.

Against a running API (``--url``): CPU is the process tree of ``--pid`` (the API's
master; its workers are children) read from /proc around the requests, so other load on
that API counts too. The ACTIVE server is the first one listed; ``--build-server`` names
a server still being scheduled, if there is one to measure::

    .venv/bin/python bench/api_get_cpu.py --url http://127.0.0.1:8774/v2.1 --pid 1234
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.dirname(_HERE))
import procstats  # noqa: E402

SETTLED = ('ACTIVE', 'ERROR')
_STARTED = time.monotonic()


def progress(message: str) -> None:
    print('[%6.1fs] %s' % (time.monotonic() - _STARTED, message), file=sys.stderr,
          flush=True)


# -- the in-process API ----------------------------------------------------------------

class InProcessClient:
    """Calls the paste app in this thread; ``cpu()`` is this thread's CPU seconds."""

    def __init__(self, app: Any, token: str, microversion: str) -> None:
        self.app = app
        self.headers = {'X-Auth-Token': token,
                        'OpenStack-API-Version': 'compute %s' % microversion}

    def request(self, method: str, path: str, body: dict | None = None,
                parse: bool = True) -> tuple[int, Any]:
        """Status and body (the raw bytes unless ``parse``: the client's own JSON
        parsing is not the API's CPU)."""
        import webob
        req = webob.Request.blank('/v2.1' + path, method=method,
                                  headers=dict(self.headers))
        req.host = '127.0.0.1:8774'
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        if not parse:
            return resp.status_int, resp.body
        return resp.status_int, (json.loads(resp.body) if resp.body else None)

    @staticmethod
    def cpu(threads: bool = False) -> float:
        """This thread's CPU seconds; with ``threads`` the whole process's (a list runs
        its cell queries on worker threads; the other services are stopped by then)."""
        return time.process_time() if threads else time.thread_time()


class RemoteClient:
    """HTTP to a running API; ``cpu()`` is the CPU of the API's process tree."""

    def __init__(self, url: str, token: str, microversion: str, pid: int) -> None:
        import requests
        self.url = url.rstrip('/')
        self.pid = pid
        self.session = requests.Session()
        self.session.headers.update({'X-Auth-Token': token,
                                     'OpenStack-API-Version': 'compute %s' % microversion})

    def request(self, method: str, path: str, body: dict | None = None,
                parse: bool = True) -> tuple[int, Any]:
        resp = self.session.request(method, self.url + path, json=body, timeout=60)
        if not parse:
            return resp.status_code, resp.content
        return resp.status_code, (resp.json() if resp.content else None)

    def cpu(self, threads: bool = False) -> float:
        return procstats.cpu_seconds(self.pid)


def cpu_per_call(client: Any, fn: Callable[[], Any], repeat: int,
                 profile: cProfile.Profile | None = None, threads: bool = False,
                 rounds: int = 5) -> dict:
    """CPU ms per call of ``fn``: ``repeat`` calls in ``rounds`` rounds; the median and
    the least of the rounds' means (the machine is shared: the least is the figure
    least disturbed by other processes), and the wall-clock p50 of one call."""
    fn()  # warm: first-use imports, pooled connections, caches a poll would have
    walls, means = [], []
    per_round = max(1, repeat // rounds)
    if profile is not None:
        profile.enable()
    for _ in range(rounds):
        start_cpu = client.cpu(threads)
        for _ in range(per_round):
            start = time.perf_counter()
            fn()
            walls.append(time.perf_counter() - start)
        means.append((client.cpu(threads) - start_cpu) / per_round)
    if profile is not None:
        profile.disable()
    return {'cpu_ms': round(statistics.median(means) * 1000, 3),
            'cpu_ms_min': round(min(means) * 1000, 3),
            'wall_ms_p50': round(statistics.median(walls) * 1000, 3),
            'calls': per_round * rounds}


def _expect(status: int, body: Any, wanted: int, what: str) -> Any:
    if status != wanted:
        raise RuntimeError('%s: HTTP %s %s' % (what, status, body))
    return body


def _get(client: Any, path: str) -> Callable[[], Any]:
    def call() -> Any:
        status, body = client.request('GET', path, parse=False)
        return _expect(status, body, 200, 'GET %s' % path)
    return call


def boot(client: Any, flavor_id: str, image_id: str, name: str) -> str:
    status, body = client.request('POST', '/servers', {'server': {
        'name': name, 'imageRef': image_id, 'flavorRef': flavor_id, 'networks': 'none'}})
    return _expect(status, body, 202, 'POST /servers')['server']['id']


def wait_settled(client: Any, server_ids: list[str], timeout: float = 300.0) -> None:
    pending = set(server_ids)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for server_id in list(pending):
            status, body = client.request('GET', '/servers/%s' % server_id)
            if status == 200 and body['server']['status'] in SETTLED:
                pending.discard(server_id)
        time.sleep(0.05)
    if pending:
        raise RuntimeError('%d servers never became ACTIVE' % len(pending))


def measure(client: Any, args: argparse.Namespace, active_id: str,
            build_id: str | None, post: Callable[[], Any] | None) -> dict:
    # A CPU-time profile: waiting for the database is not the API's cost.
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    figures: dict[str, Any] = {'microversion': args.microversion}
    figures['get_active'] = cpu_per_call(client, _get(client, '/servers/%s' % active_id),
                                         args.gets, profile)
    if build_id is not None:
        figures['get_build_request'] = cpu_per_call(
            client, _get(client, '/servers/%s' % build_id), args.gets, profile)
    figures['get_detail'] = cpu_per_call(client, _get(client, '/servers/detail'),
                                         args.detail_gets, threads=True)
    status, body = client.request('GET', '/servers/detail')
    figures['get_detail']['servers'] = len(body['servers'])
    if post is not None:
        figures['post'] = cpu_per_call(client, post, args.posts)
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats('cumulative').print_stats(30)
        print(out.getvalue(), file=sys.stderr)
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats('tottime').print_stats(30)
        print(out.getvalue(), file=sys.stderr)
        print(json.dumps({'own_time_share_by_library': _by_library(profile)}),
              file=sys.stderr)
    return figures


def _by_library(profile: cProfile.Profile) -> dict[str, float]:
    """Shares of the profile's own (not inclusive) time by top-level package."""
    totals: dict[str, float] = {}
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in \
            pstats.Stats(profile).stats.items():
        if 'site-packages/' in filename:
            key = filename.split('site-packages/', 1)[1].split('/', 1)[0]
        elif '/novalite/' in filename:
            key = 'novalite/' + filename.split('/novalite/', 1)[1].split('/', 1)[0]
        elif filename.startswith('~') or filename.startswith('<'):
            key = 'builtins'
        else:
            key = 'stdlib:' + os.path.basename(filename)
        totals[key] = totals.get(key, 0.0) + tottime
    whole = sum(totals.values()) or 1.0
    return {key: round(value / whole * 100, 1) for key, value in
            sorted(totals.items(), key=lambda item: -item[1])[:25]}


# -- through the daemon's HTTP server ---------------------------------------------------

def http_cpu_per_call(base_url: str, path: str, args: argparse.Namespace,
                      count: int, rounds: int = 5) -> dict:
    """This process's CPU per GET served by the API's HTTP server, sent by a client in
    a process of its own (``api_server_cpu.cpu_per_request``). The in-process services'
    own threads (heartbeats, periodic tasks) count too, hence the least of the rounds
    beside their median."""
    import api_server_cpu
    per_round = max(1, count // rounds)
    figures = api_server_cpu.cpu_per_request(
        base_url + path, per_round, rounds,
        headers={'X-Auth-Token': args.token,
                 'OpenStack-API-Version': 'compute %s' % args.microversion})
    return {'cpu_ms': round(figures['cpu_s'] * 1000, 3),
            'cpu_ms_min': round(figures['cpu_s_min'] * 1000, 3),
            'wall_ms_mean': round(figures['wall_s_mean'] * 1000, 3),
            'calls': figures['requests']}


def measure_http(app: Any, args: argparse.Namespace, active_id: str,
                 build_id: str | None) -> dict:
    """The figures of the status poll served by novalite-api's HTTP server
    (novalite.api.server: waitress, HTTP/1.1 kept connections), as the boot storm's
    clients meet it."""
    from novalite.api import server as http_server
    server = http_server.Server(app, '127.0.0.1', 0)
    server.start()
    try:
        base_url = 'http://%s:%s/v2.1' % server.address
        figures = {'get_active': http_cpu_per_call(base_url, '/servers/%s' % active_id,
                                                   args, args.gets)}
        if build_id is not None:
            figures['get_build_request'] = http_cpu_per_call(
                base_url, '/servers/%s' % build_id, args, args.gets)
        return figures
    finally:
        server.stop()


# -- the throw-away stack --------------------------------------------------------------

def _with_driver(url: str, driver: str) -> str:
    """``url`` with another MySQL driver, and only the query options all drivers know."""
    from sqlalchemy.engine import make_url
    parsed = make_url(url)
    return parsed.set(drivername='mysql+%s' % driver, query={
        key: value for key, value in parsed.query.items() if key == 'charset'}
    ).render_as_string(hide_password=False)


def _databases(backend: str, tmp: str, driver: str | None = None
               ) -> tuple[dict[str, str], Callable[[], None]]:
    """URLs of new api/cell0/cell1 databases, and the function that drops them;
    ``driver`` replaces PyMySQL in the MariaDB URLs (e.g. ``mysqldb``)."""
    if backend == 'sqlite':
        return ({name: 'sqlite:///%s' % os.path.join(tmp, name + '.sqlite')
                 for name in ('api', 'cell0', 'cell1')}, lambda: None)
    from tests.devstack.harness import backends
    tag = uuid.uuid4().hex[:10]
    names = {name: 'nlbench_%s_%s' % (name, tag) for name in ('api', 'cell0', 'cell1')}
    urls = {}
    try:
        for name, db_name in names.items():
            urls[name] = backends.create_database(backend, db_name)
            if driver:
                urls[name] = _with_driver(urls[name], driver)
    except BaseException:
        for db_name in list(names.values())[:len(urls)]:
            backends.drop_database(backend, db_name)
        raise

    def drop() -> None:
        from novalite.db import engine
        engine.dispose_all()
        for db_name in names.values():
            backends.drop_database(backend, db_name)
    return urls, drop


def run_in_process(args: argparse.Namespace) -> dict:
    from oslo_log import log as logging

    from novalite.api.openstack import loader
    from novalite.conf import CONF
    from tests.functional.stack import Stack

    tmp = tempfile.mkdtemp(prefix='nlbench-')
    done = False
    urls, drop = _databases(args.backend, tmp, args.mysql_driver)

    class BenchStack(Stack):
        def db_url(self, name: str) -> str:
            return urls[name]

    unlimited = {('quota', key): -1 for key in ('instances', 'cores', 'ram')}
    stack = BenchStack(tmp, overrides={**unlimited, (None, 'debug'): False})
    try:
        logging.register_options(CONF)
        stack.configure()
        # As the daemon: an INFO line per request into a log file.
        CONF.set_override('log_file', os.path.join(tmp, 'api.log'))
        logging.setup(CONF, 'novalite')
        progress('starting the stack on %s' % args.backend)
        stack.start()
        progress('stack up; booting %d servers' % args.servers)
        client = InProcessClient(loader.load_app('osapi_compute'), args.token,
                                 args.microversion)
        # As novalite-api and the WSGI module do once the app is loaded.
        freeze = getattr(loader, 'freeze_loaded_objects', None)
        if freeze is not None:
            freeze()
        flavor = _expect(*client.request('POST', '/flavors', {'flavor': {
            'name': 'm1.bench', 'ram': 64, 'vcpus': 1, 'disk': 1}}), 200, 'POST /flavors')
        flavor_id = flavor['flavor']['id']
        image_id = stack.image['id']
        ids = [boot(client, flavor_id, image_id, 'bench-%d' % i)
               for i in range(args.servers)]
        wait_settled(client, ids)
        progress('servers ACTIVE; measuring')
        # No services from here on: servers booted now stay BuildRequests, and the
        # process's CPU is the API's alone (but for idle Placement and Glance servers).
        for service in stack.services:
            service.stop()
        stack.services.clear()
        stack.computes.clear()
        build_id = boot(client, flavor_id, image_id, 'bench-building')
        count = iter(range(10 ** 6))
        figures = measure(client, args, ids[0], build_id,
                          lambda: boot(client, flavor_id, image_id,
                                       'bench-post-%d' % next(count)))
        if args.http:
            figures['http'] = measure_http(client.app, args, ids[0], build_id)
        figures['backend'] = args.backend + ('+%s' % args.mysql_driver
                                             if args.mysql_driver else '')
        figures['active_servers'] = args.servers
        done = True
        return figures
    finally:
        stack.stop()
        drop()
        if done:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            # oslo.log's exception hook writes a failure to the log file, not stderr.
            print('bench failed: see %s' % os.path.join(tmp, 'api.log'), file=sys.stderr)


def run_remote(args: argparse.Namespace) -> dict:
    client = RemoteClient(args.url, args.token, args.microversion, args.pid)
    status, body = client.request('GET', '/servers/detail')
    active = [s['id'] for s in _expect(status, body, 200, 'GET /servers/detail')['servers']
              if s['status'] == 'ACTIVE']
    if not active:
        raise SystemExit('no ACTIVE server to measure at %s' % args.url)
    return measure(client, args, active[0], args.build_server, None)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--backend', default='mysql', choices=('mysql', 'sqlite'),
                        help='databases of the in-process stack (default: MariaDB)')
    parser.add_argument('--mysql-driver', metavar='NAME',
                        help='the SQLAlchemy MySQL driver instead of pymysql (e.g. mysqldb: '
                             'mysqlclient, if installed), to compare drivers')
    parser.add_argument('--servers', type=int, default=100,
                        help='ACTIVE servers booted (the detail lists them all)')
    parser.add_argument('--gets', type=int, default=300,
                        help='GET /servers/{id} per kind of server')
    parser.add_argument('--detail-gets', type=int, default=20)
    parser.add_argument('--posts', type=int, default=20, help='POST /servers measured')
    parser.add_argument('--microversion', default='2.47')
    parser.add_argument('--token', default='admin:admin')
    parser.add_argument('--http', action='store_true',
                        help='also GET /servers/{id} through novalite-api\'s HTTP server '
                             '(figures "http": the server\'s CPU per GET included)')
    parser.add_argument('--profile', action='store_true',
                        help='cProfile of the GET /servers/{id} calls, top 30, to stderr')
    parser.add_argument('--url', help='a running Compute API instead of an in-process one')
    parser.add_argument('--pid', type=int, help='with --url: the API process (tree)')
    parser.add_argument('--build-server', help='with --url: a server still building')
    args = parser.parse_args(argv)
    if args.url and not args.pid:
        parser.error('--url needs --pid (whose CPU to count)')
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    yardstick = procstats.yardstick_ms()
    figures = run_remote(args) if args.url else run_in_process(args)
    figures['yardstick_ms'] = yardstick
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
