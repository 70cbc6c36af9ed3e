"""Fixtures of the API fuzzer, and the summary it prints at the end of the session.

The summary (requests sent, status histogram) goes to the terminal report, so CI's log
shows it without ``-s``; under pytest-xdist the workers hand their counts to the
controller.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.functional.fuzz import harness, seeding
from tests.functional.stack import Stack


@pytest.fixture(scope='module')
def fuzz_app(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Callable:
    return seeding.keystone_app(str(tmp_path_factory.mktemp('fuzz')))


@pytest.fixture(scope='module')
def fuzz_seed(fuzz_app: Callable, stack: Stack) -> seeding.Seed:
    return seeding.seed(fuzz_app, stack)


# -- the summary: requests and status histogram, in the log CI shows ----------------------

def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, 'workeroutput', None)
    if workeroutput is not None:  # a pytest-xdist worker: hand the counts over
        workeroutput['api_fuzz_stats'] = json.dumps(harness.STATS.as_dict())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    stats = getattr(node, 'workeroutput', {}).get('api_fuzz_stats')
    if stats:
        harness.STATS.add(json.loads(stats))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if harness.STATS.requests:
        terminalreporter.write_sep('=', 'API fuzz (tests/functional/fuzz)')
        for line in harness.STATS.lines():
            terminalreporter.write_line(line)
