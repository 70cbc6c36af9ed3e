"""Sending the fuzzer's requests, in process or over HTTP, and judging the answers.

An answer passes when it is not a 5xx, when every 4xx (but HEAD's) is Nova's fault
body (one key named after the status, as Nova 34's ``Fault._fault_names``, holding
``code`` and ``message``), when no body shows a traceback or SQL, and when a reader
changed nothing (no 2xx to a write).
"""
from __future__ import annotations

import collections
import dataclasses
import http.client
import io
import json
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

from tests.functional.fuzz.strategies import Request

# Nova 34's fault keys by status (nova/api/openstack/wsgi.py, Fault); any other status
# is a computeFault.
FAULT_NAMES = {400: 'badRequest', 401: 'unauthorized', 403: 'forbidden',
               404: 'itemNotFound', 405: 'badMethod', 409: 'conflictingRequest',
               413: 'overLimit', 415: 'badMediaType', 429: 'overLimit',
               501: 'notImplemented', 503: 'serviceUnavailable'}

# What must never reach a client: a Python traceback or the database layer's words.
LEAKS = ('Traceback (most recent call last)', 'File "/', 'sqlalchemy', 'oslo_db',
         'sqlite3.', 'pymysql', 'SELECT ', 'INSERT INTO', 'UPDATE instances')

# Writes a reader may make: keypairs belong to the user, not the project (Nova 34's
# keypair rules are admin-or-owner by user id); the images proxy checks no policy, as
# Nova's, and leaves the decision to Glance (here a double that allows everything).
READER_WRITES = ('/os-keypairs', '/images')

# Classes of failure known and not fixed yet, by the tag of the input that causes them:
# an answer that fails only on a request carrying one of these tags is counted (and
# shown in the summary), not failed. Issue 20's F1-F5 and F8 were here until their fix
# landed; keep it empty unless a fix is in flight, with the issue named.
KNOWN_OPEN: dict[str, str] = {}


@dataclasses.dataclass
class Stats:
    """What the suite sent and got back: printed at the end of the session."""

    requests: int = 0
    statuses: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    known: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    by_transport: collections.Counter = dataclasses.field(
        default_factory=collections.Counter)
    inputs: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def as_dict(self) -> dict:
        return {'requests': self.requests, 'statuses': dict(self.statuses),
                'known': dict(self.known), 'by_transport': dict(self.by_transport),
                'inputs': dict(self.inputs)}

    def add(self, other: dict) -> None:
        self.requests += other['requests']
        self.statuses.update({int(k): v for k, v in other['statuses'].items()})
        self.known.update(other['known'])
        self.by_transport.update(other['by_transport'])
        self.inputs.update(other['inputs'])

    def lines(self) -> list[str]:
        hist = ', '.join('%d: %d' % (status, count)
                         for status, count in sorted(self.statuses.items()))
        out = ['%d requests (%s)' % (self.requests, ', '.join(
            '%s %d' % item for item in sorted(self.by_transport.items()))),
               'status histogram: %s' % hist,
               'requests with hostile inputs: %s' % ', '.join(
                   '%s %d' % item for item in sorted(self.inputs.items()))]
        for name, count in sorted(self.known.items()):
            out.append('known, not yet fixed: %s: %d' % (name, count))
        return out


STATS = Stats()


@dataclasses.dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def environ_of(req: Request) -> dict:
    """The WSGI environ a server would make of ``req``: PATH_INFO decoded as latin-1."""
    path = urllib.parse.unquote_to_bytes(req.path).decode('latin-1')
    body = req.body or b''
    environ = {
        'REQUEST_METHOD': req.method, 'SCRIPT_NAME': '', 'PATH_INFO': path,
        'QUERY_STRING': req.query, 'SERVER_NAME': 'fuzz', 'SERVER_PORT': '80',
        'SERVER_PROTOCOL': 'HTTP/1.1', 'REMOTE_ADDR': '127.0.0.1',
        'wsgi.version': (1, 0), 'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(body),
        'wsgi.errors': io.StringIO(), 'wsgi.multithread': False,
        'wsgi.multiprocess': False, 'wsgi.run_once': False,
    }
    length = req.content_length if req.content_length is not None else len(body)
    if req.body is not None or req.content_length is not None:
        environ['CONTENT_LENGTH'] = str(length)
    for name, value in req.headers.items():
        key = name.upper().replace('-', '_')
        if key == 'CONTENT_TYPE':
            environ[key] = value
        else:
            environ['HTTP_' + key] = value
    return environ


def call_wsgi(app: Callable, req: Request) -> Answer:
    """``req`` through the WSGI application in this process."""
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
        started['status'] = int(status.split(' ', 1)[0])
        started['headers'] = dict(headers)
        return lambda data: None
    try:
        chunks: Iterable[bytes] = app(environ_of(req), start_response)
        try:
            body = b''.join(chunks)
        finally:
            close = getattr(chunks, 'close', None)
            if close is not None:
                close()
    except Exception as exc:  # what a WSGI server turns into its own plain 500
        return Answer(500, {}, b'(escaped the application: %r)' % exc)
    return Answer(started['status'], started['headers'], body)


def call_http(host: str, port: int, req: Request) -> Answer:
    """``req`` through the API's HTTP server (the body's true length always)."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        target = req.path + ('?' + req.query if req.query else '')
        conn.putrequest(req.method, target, skip_host=False, skip_accept_encoding=True)
        for name, value in req.headers.items():
            conn.putheader(name, value.encode('latin-1', 'replace'))
        if req.body is not None:
            conn.putheader('Content-Length', str(len(req.body)))
        conn.endheaders(req.body)
        resp = conn.getresponse()
        return Answer(resp.status, dict(resp.getheaders()), resp.read())
    finally:
        conn.close()


def problems(req: Request, answer: Answer) -> list[str]:
    """What is wrong with ``answer`` to ``req`` (nothing: an empty list)."""
    found = []
    status = answer.status
    if status >= 500:
        found.append('server error %d' % status)
    text = answer.body.decode('utf-8', 'replace')
    for leak in LEAKS:
        if leak in text:
            found.append('body leaks %r' % leak)
    if 400 <= status < 600 and req.method != 'HEAD':
        found.extend(_fault_problems(status, answer.body))
    content_type = {k.lower(): v for k, v in answer.headers.items()}.get('content-type', '')
    if 400 <= status < 600 and not content_type.startswith('application/json'):
        # HEAD included: its fault has no body, but says what the body would be.
        found.append('%d with Content-Type %r' % (status, content_type))
    if (req.caller.roles == ('reader',) and req.method in ('POST', 'PUT', 'DELETE', 'PATCH')
            and 200 <= status < 300 and not req.route.path.startswith(READER_WRITES)):
        found.append('a reader got %d for a write' % status)
    return found


def _fault_problems(status: int, body: bytes) -> list[str]:
    try:
        fault = json.loads(body)
    except ValueError:
        return ['%d body is not JSON: %r' % (status, body[:200])]
    expected = FAULT_NAMES.get(status, 'computeFault')
    if not isinstance(fault, dict) or list(fault) != [expected]:
        keys = list(fault) if isinstance(fault, dict) else type(fault).__name__
        return ['%d fault keys %s, Nova says [%r]' % (status, keys, expected)]
    inner = fault[expected]
    if (not isinstance(inner, dict) or inner.get('code') != status
            or not isinstance(inner.get('message'), str)):
        return ['%d fault %r lacks code/message' % (status, inner)]
    return []


def judge(req: Request, answer: Answer, transport: str) -> None:
    """Count the answer; fail unless it passes or fails only in a known open way."""
    STATS.requests += 1
    STATS.statuses[answer.status] += 1
    STATS.by_transport[transport] += 1
    STATS.inputs.update(req.tags)
    found = problems(req, answer)
    if not found:
        return
    known = sorted(tag for tag in req.tags if tag in KNOWN_OPEN)
    if known:
        STATS.known[KNOWN_OPEN[known[0]]] += 1
        return
    raise AssertionError('%s\n-> %d %r\n%s' % (
        req.describe(), answer.status, answer.body[:600], '\n'.join(found)))
