"""Hostile requests to every route and verb: no 5xx, Nova's fault format, no leaks.

One hypothesis test per route and verb of the route table, in process (twenty requests
each, four for the removed APIs), then three hundred over every route through the HTTP
server: some 3,300 requests, about a minute. Derandomized: CI draws the same requests
on every run, and a failure prints the request to replay. Deletes come last, so the
seeded resources live through the other routes.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.functional.fuzz import catalog, harness, seeding
from tests.functional.fuzz import strategies as fz
from tests.functional.stack import Stack

ROUTES = sorted(catalog.all_routes(), key=lambda r: (r.method == 'DELETE', r.path, r.method))
REMOVED = 'RemovedController'
MIN_VERSION, MAX_VERSION = catalog.versions()

# CI's budget; NOVALITE_FUZZ_SCALE=10 sends ten times as many, and NOVALITE_FUZZ_RANDOM=1
# draws new requests on every run (a failure then prints its seed to replay with).
SCALE = float(os.environ.get('NOVALITE_FUZZ_SCALE', '1'))
SETTINGS: dict[str, Any] = {
    'derandomize': not os.environ.get('NOVALITE_FUZZ_RANDOM'), 'database': None,
    'deadline': None, 'print_blob': False,
    'suppress_health_check': [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                              HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
EXAMPLES = int(20 * SCALE)
EXAMPLES_REMOVED = int(4 * SCALE)
EXAMPLES_HTTP = int(300 * SCALE)


def _versions() -> st.SearchStrategy:
    """A microversion: the ends, the ranges' edges around them, or any in between."""
    top = int(MAX_VERSION.split('.')[1])
    return st.one_of(st.sampled_from([MIN_VERSION, MAX_VERSION]),
                     st.integers(1, top).map(lambda minor: '2.%d' % minor))


def _placeholder_owner(path: str) -> list[tuple[str, str]]:
    """Each placeholder of ``path`` with the path segment before it."""
    parts = path.strip('/').split('/')
    return [(part, parts[i - 1] if i else '') for i, part in enumerate(parts)
            if part.startswith('{')]


# What a request gets wrong: one part at a time (so the rest gets it past the checks
# before), or everything at once.
FOCUS = ('path', 'query', 'headers', 'body', 'body', 'body', 'framing', 'none', 'all')


@st.composite
def requests_for(draw: Any, route: catalog.Route, seed: seeding.Seed,
                 callers: tuple[fz.Caller, ...]) -> fz.Request:
    tags: set[str] = set()
    focus = draw(st.sampled_from(FOCUS))

    def hostile(part: str) -> bool:
        return focus in (part, 'all')
    caller = draw(st.sampled_from(callers))
    version = draw(_versions())
    path = route.path
    for placeholder, owner in _placeholder_owner(route.path):
        value = draw(fz.path_id(seed.ids.get(owner, []), tags, hostile('path')))
        path = path.replace(placeholder, value, 1)
    prefixes = ['/v2.1', '/v2.1/' + caller.project_id]
    if hostile('path'):
        prefixes += ['/v2.1/' + seeding.PROJECT_B, '/v2.1/ZZZ', '/v2', '']
    prefix = draw(st.sampled_from(prefixes))
    query = draw(fz.query_for(route, version, tags, hostile('query')))
    body = draw(fz.body_for(route, version, seed.hints, tags, hostile('body')))
    headers = draw(fz.headers_for(version, body is not None, tags, hostile('headers')))
    length: int | str | None = None
    if hostile('framing'):
        length = draw(st.sampled_from(
            [len(body or b'') + 10, max(len(body or b'') - 1, 0), None, 'abc', '-1', '',
             '99999999999999999999', ' 1', '0x10']))
        if isinstance(length, int):
            tags.add('short-body' if length > len(body or b'') else 'long-body')
        elif length is not None:
            tags.add('bad-content-length')
    method = route.method
    if hostile('framing'):
        # A verb the route does not serve, or HEAD for a GET.
        method = draw(st.sampled_from([method, 'HEAD' if method == 'GET' else method,
                                       'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'GET']))
    elif method == 'GET' and draw(st.integers(0, 14)) == 0:
        method = 'HEAD'
    tags.discard('')
    return fz.Request(caller, route, method, prefix + path, query,
                      {**caller.headers(), **headers}, body, length, tags)


@pytest.mark.parametrize('route', ROUTES, ids=lambda route: route.name)
def test_route_in_process(route: catalog.Route, fuzz_app: Callable,
                          fuzz_seed: seeding.Seed) -> None:
    examples = EXAMPLES_REMOVED if route.controller == REMOVED else EXAMPLES

    @settings(max_examples=examples, **SETTINGS)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        req = data.draw(requests_for(route, fuzz_seed, seeding.CALLERS))
        harness.judge(req, harness.call_wsgi(fuzz_app, req), 'in-process')
    run()


def test_routes_over_http(stack: Stack, fuzz_seed: seeding.Seed) -> None:
    """Every route through the real HTTP server of the all-in-one (noauth2 callers)."""
    host, port = stack.api_server.url.split('//')[1].split(':')
    callers = (seeding.ADMIN, seeding.MEMBER_A, seeding.MEMBER_B)
    served = [route for route in ROUTES if route.controller != REMOVED]

    @settings(max_examples=EXAMPLES_HTTP, **SETTINGS)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        route = data.draw(st.sampled_from(served))
        req = data.draw(requests_for(route, fuzz_seed, callers))
        # noauth2 reads the token; the identity headers stay (harmless) as noise.
        req.headers['X-Auth-Token'] = req.caller.token
        req.content_length = None
        req.tags.discard('short-body')
        harness.judge(req, harness.call_http(host, int(port), req), 'http')
    run()
