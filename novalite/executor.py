"""Every thread novalite starts: bounded futurist pools for background work, and named
daemon threads for the few loops that run as long as the process.

Two pools, each created on first use, one per process:

- ``background``: work an RPC endpoint hands off so that the message does not hold an
  RPC worker (a compute's build, reboot, resize...), and a resource tracker's deferred
  save. ``[DEFAULT] default_thread_pool_size`` (64) threads at most, as many as
  oslo.messaging's default ``executor_thread_pool_size`` lets RPC workers hand work over
  at once; more wait in the pool's queue. A graceful stop waits for this work
  (:func:`wait_background`).
- ``cells``: one call per cell database of ``context.scatter_gather_cells``.
  ``[DEFAULT] cell_worker_thread_pool_size`` (32) threads at most; a call still queued
  when its caller's timeout ends is cancelled, so a hung cell holds one thread per
  caller, not the pool.

With the eventlet backend (``novalite.concurrency``) the pools are futurist's green
pools, and the daemon threads are green threads (``threading`` is monkey-patched), as
before.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent import futures
from typing import ParamSpec, TypeVar

import futurist
from oslo_context import context as oslo_context
from oslo_log import log as logging

from novalite import concurrency
from novalite.conf import CONF
from novalite.objects import base as obj_base

LOG = logging.getLogger(__name__)

P = ParamSpec('P')
R = TypeVar('R')

# name -> (the process that made the pool, the pool): a forked worker makes its own, as
# the threads of its parent's did not follow it across the fork.
_pools: dict[str, tuple[int, futurist.ThreadPoolExecutor | futurist.GreenThreadPoolExecutor]] = {}
_pools_lock = threading.Lock()
# Background work not finished yet: a graceful stop waits for it.
_live: set[futures.Future[None]] = set()
_live_lock = threading.Lock()


def make_pool(max_workers: int
              ) -> futurist.ThreadPoolExecutor | futurist.GreenThreadPoolExecutor:
    """A pool of the backend's kind (green threads with eventlet); its owner submits
    ``carrying(fn)`` and shuts it down (a compute's live migrations)."""
    if concurrency.choose() == 'eventlet':
        return futurist.GreenThreadPoolExecutor(max_workers=max_workers)
    return futurist.ThreadPoolExecutor(max_workers=max_workers)


def _pool(name: str, max_workers: int) -> futures.Executor:
    with _pools_lock:
        pid, pool = _pools.get(name, (None, None))
        if pool is None or pid != os.getpid():
            pool = make_pool(max_workers)
            _pools[name] = (os.getpid(), pool)
        return pool


def _set_current(context: oslo_context.RequestContext | None) -> None:
    if context is not None:
        context.update_store()
    else:
        # oslo.context has no public way to forget the current context; get_current()
        # answers None for this value, as for a thread that never had one.
        oslo_context._request_store.context = None


def carrying(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` to run on another thread (a pool's, a looping call's) with this thread's
    object indirection (so work a compute endpoint hands off still reaches the database
    through the conductor) and its current request context (so oslo.log prints the
    request id in what it logs). The thread gets its own context back when ``fn``
    returns, as a pool's is reused."""
    api = obj_base.current_indirection_api()
    context = oslo_context.get_current()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        previous = oslo_context.get_current()
        _set_current(context)
        try:
            if api is None:
                return fn(*args, **kwargs)
            with obj_base.indirection(api):
                return fn(*args, **kwargs)
        finally:
            _set_current(previous)
    return run


def spawn(fn: Callable[P, object], *args: P.args, **kwargs: P.kwargs) -> futures.Future[None]:
    """Run ``fn(*args, **kwargs)`` on the background pool, with this thread's object
    indirection and request context; an exception it raises is logged (nobody waits for
    its result)."""
    def run() -> None:
        try:
            fn(*args, **kwargs)
        except Exception:
            LOG.exception('Unhandled error in background work %s',
                          getattr(fn, '__name__', fn))

    future = _pool('background', CONF.default_thread_pool_size).submit(carrying(run))
    with _live_lock:
        _live.add(future)
    future.add_done_callback(_forget)
    return future


def _forget(future: futures.Future[None]) -> None:
    with _live_lock:
        _live.discard(future)


def wait_background(timeout: float) -> None:
    """Wait, ``timeout`` seconds at most, for the background work submitted so far."""
    with _live_lock:
        pending = list(_live)
    if pending:
        futures.wait(pending, timeout=timeout)


def submit_to(pool: str, max_workers: int, fn: Callable[P, R], *args: P.args,
              **kwargs: P.kwargs) -> futures.Future[R]:
    """Run ``fn(*args, **kwargs)`` on a process-wide pool of its own (``pool`` by name,
    made with ``max_workers`` threads on first use), with this thread's object
    indirection and request context."""
    return _pool(pool, max_workers).submit(carrying(fn), *args, **kwargs)


def submit_to_cell(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> futures.Future[R]:
    """Run ``fn(*args, **kwargs)`` on the cells pool, with this thread's object
    indirection and request context; the caller takes the result or the exception from
    the future."""
    return _pool('cells', CONF.cell_worker_thread_pool_size).submit(
        carrying(fn), *args, **kwargs)


def start_thread(name: str, fn: Callable[..., object], *args: object) -> threading.Thread:
    """Start ``fn(*args)`` on a daemon thread of its own named ``name``: for a loop that
    runs as long as its owner (a service's heartbeat, libvirt's event loop), which
    would hold a pool thread for good."""
    thread = threading.Thread(target=fn, args=args, name=name, daemon=True)
    thread.start()
    return thread
