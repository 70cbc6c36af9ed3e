"""novalite.executor: background work keeps the object indirection and the request
context (the request id in its logs) of the thread that handed it off, a graceful stop
waits for it, and no other module starts a bare thread."""
from __future__ import annotations

import logging
import pathlib
import re
import threading

import pytest
from oslo_context import context as oslo_context

from novalite import executor
from novalite.objects import base as obj_base

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / 'novalite'


def test_background_work_keeps_the_object_indirection_of_the_caller():
    api = object()
    seen = []
    with obj_base.indirection(api):
        future = executor.spawn(lambda: seen.append(obj_base.current_indirection_api()))
    future.result(30)
    assert seen == [api]


@pytest.fixture
def current_context():
    """This thread's current request context for the test: none at first, the one it
    had before afterwards."""
    previous = oslo_context.get_current()
    executor._set_current(None)
    yield
    executor._set_current(previous)


def _one_thread_pool(monkeypatch):
    """The background and cells pools as one pool of one thread, so a second piece of
    work runs on the thread the first one used."""
    pool = executor.futurist.ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(executor, '_pool', lambda name, max_workers: pool)
    return pool


def test_background_work_runs_in_the_request_context_of_the_caller(monkeypatch,
                                                                   current_context):
    pool = _one_thread_pool(monkeypatch)
    context = oslo_context.RequestContext(request_id='req-background', overwrite=False)
    seen = []
    context.update_store()
    executor.spawn(lambda: seen.append(oslo_context.get_current())).result(30)
    executor._set_current(None)
    # The thread forgets it after: work handed off without a context runs without one.
    executor.spawn(lambda: seen.append(oslo_context.get_current())).result(30)
    pool.shutdown()
    assert seen == [context, None]


class _RequestIds(logging.Handler):
    """What oslo.log's formatter prints as the request id: the current context's, read
    on the thread that logs."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str | None] = []

    def emit(self, record: logging.LogRecord) -> None:
        current = oslo_context.get_current()
        self.seen.append(current.request_id if current else None)


def test_an_error_in_background_work_is_logged_with_the_request_id(monkeypatch,
                                                                   current_context):
    _one_thread_pool(monkeypatch)
    context = oslo_context.RequestContext(request_id='req-failing', overwrite=False)
    handler = _RequestIds()
    logger = logging.getLogger(executor.__name__)
    logger.addHandler(handler)

    def fail() -> None:
        raise RuntimeError('boom')

    context.update_store()
    try:
        executor.spawn(fail).result(30)
    finally:
        logger.removeHandler(handler)
    assert handler.seen == ['req-failing']


def test_cell_calls_run_in_the_request_context_of_the_caller(monkeypatch, current_context):
    pool = _one_thread_pool(monkeypatch)
    context = oslo_context.RequestContext(request_id='req-cells', overwrite=False)
    context.update_store()
    seen = executor.submit_to_cell(oslo_context.get_current).result(30)
    executor._set_current(None)
    after = executor.submit_to_cell(oslo_context.get_current).result(30)
    pool.shutdown()
    assert (seen, after) == (context, None)


def test_an_error_in_background_work_is_logged_not_raised(caplog):
    def fail() -> None:
        raise RuntimeError('boom')

    executor.spawn(fail).result(30)
    assert 'Unhandled error in background work fail' in caplog.text


def test_a_graceful_stop_waits_for_background_work():
    release = threading.Event()
    finished = threading.Event()

    def work() -> None:
        release.wait(30)
        finished.set()

    executor.spawn(work)
    threading.Timer(0.2, release.set).start()
    executor.wait_background(30)
    assert finished.is_set()


def test_cell_calls_keep_the_object_indirection_of_the_caller():
    api = object()
    with obj_base.indirection(api):
        future = executor.submit_to_cell(obj_base.current_indirection_api)
    assert future.result(30) is api


def test_a_long_running_loop_gets_a_named_daemon_thread():
    stop = threading.Event()
    thread = executor.start_thread('test-loop', stop.wait, 30)
    try:
        assert thread.name == 'test-loop' and thread.daemon and thread.is_alive()
    finally:
        stop.set()
        thread.join(30)


def test_only_the_executor_module_creates_threads():
    pattern = re.compile(r'threading\.(Thread|Timer)\(')
    offenders = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob('*.py')
        if pattern.search(path.read_text()) and path.name != 'executor.py')
    assert offenders == []


def test_a_forked_process_gets_pools_of_its_own(monkeypatch):
    """The threads of a pool made before a fork are not in the child."""
    before = executor._pool('background', 4)
    assert executor._pool('background', 4) is before
    monkeypatch.setattr(executor.os, 'getpid', lambda: -1)
    assert executor._pool('background', 4) is not before
