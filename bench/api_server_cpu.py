"""The HTTP server's own CPU per request: novalite-api's server (waitress, HTTP/1.1 kept
connections) against wsgiref's HTTP/1.0 one (what novalite-api used before session 4),
both serving a WSGI app that answers at once, so nothing but the server is measured.

A client in a process of its own (requests.Session, as the boot storm's pollers) sends
``--requests`` GETs per round; this process's CPU (user + system: the kernel's TCP work
for a connection counts) per request is printed, median and least of the rounds::

    .venv/bin/python bench/api_server_cpu.py --requests 400 --rounds 7
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import statistics
import subprocess
import sys
import threading
import time
from typing import Any
from wsgiref import simple_server

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procstats  # noqa: E402

from novalite.api import server as novalite_server  # noqa: E402

_BODY = b'{"server": {"id": "7c1a9d36-1d3e-4b8e-9d6c-3c0f5a1b2c3d", "status": "ACTIVE"}}'

_CLIENT = r"""
import json, sys, requests
url, count = sys.argv[1], int(sys.argv[2])
session = requests.Session()
session.headers.update(json.loads(sys.argv[3]))
for _ in range(20):
    session.get(url, timeout=60).raise_for_status()
print('ready', flush=True)
while sys.stdin.readline().strip() == 'go':
    for _ in range(count):
        session.get(url, timeout=60).raise_for_status()
    print('done', flush=True)
"""
_HEADERS = {'X-Auth-Token': 'admin:admin', 'OpenStack-API-Version': 'compute 2.47'}


def app(environ: dict, start_response: Any) -> list[bytes]:
    start_response('200 OK', [('Content-Type', 'application/json'),
                              ('Content-Length', str(len(_BODY)))])
    return [_BODY]


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _WsgirefServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    """novalite-api's server until session 4: wsgiref, a thread per request."""

    daemon_threads = True
    request_queue_size = socket.SOMAXCONN


def cpu_per_request(url: str, count: int, rounds: int,
                    headers: dict | None = None) -> dict:
    """This process's CPU (user + system) per ``GET url`` that a client in a process of
    its own (its CPU not counted; ``requests.Session``, as the boot storm's pollers)
    sends, ``count`` per round: the median and least of the rounds' means in seconds,
    and the mean wall time of a request."""
    client = subprocess.Popen(
        [sys.executable, '-c', _CLIENT, url, str(count), json.dumps(headers or _HEADERS)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    means, walls = [], []
    try:
        assert client.stdout.readline().strip() == 'ready'
        for _ in range(rounds):
            start_cpu, start = time.process_time(), time.perf_counter()
            client.stdin.write('go\n')
            client.stdin.flush()
            assert client.stdout.readline().strip() == 'done'
            means.append((time.process_time() - start_cpu) / count)
            walls.append((time.perf_counter() - start) / count)
        client.stdin.write('quit\n')
        client.stdin.flush()
    finally:
        client.wait(timeout=60)
    return {'cpu_s': statistics.median(means), 'cpu_s_min': min(means),
            'wall_s_mean': statistics.mean(walls), 'requests': count * rounds}


def _in_us(figures: dict) -> dict:
    return {'cpu_us': round(figures['cpu_s'] * 1e6),
            'cpu_us_min': round(figures['cpu_s_min'] * 1e6),
            'requests': figures['requests']}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--requests', type=int, default=400, help='per round')
    parser.add_argument('--rounds', type=int, default=7)
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {'benchmark': 'api_server_cpu',
                               'yardstick_ms': procstats.yardstick_ms()}
    old = simple_server.make_server('127.0.0.1', 0, app, server_class=_WsgirefServer,
                                    handler_class=_QuietHandler)
    threading.Thread(target=old.serve_forever, daemon=True).start()
    new = novalite_server.Server(app, '127.0.0.1', 0)
    new.start()
    try:
        figures['wsgiref_http10'] = _in_us(cpu_per_request(
            'http://127.0.0.1:%d/v2.1/servers/x' % old.server_port, args.requests,
            args.rounds))
        figures['novalite_http11'] = _in_us(cpu_per_request(
            'http://%s:%d/v2.1/servers/x' % new.address, args.requests, args.rounds))
    finally:
        new.stop()
        old.shutdown()
        old.server_close()
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
