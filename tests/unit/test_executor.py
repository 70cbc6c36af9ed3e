"""novalite.executor: background work keeps the object indirection of the thread that
handed it off, a graceful stop waits for it, and no other module starts a bare thread."""
from __future__ import annotations

import pathlib
import re
import threading

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
