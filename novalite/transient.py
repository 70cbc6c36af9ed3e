"""Retrying what a short outage breaks: the bus, the database, Placement, Cinder.

A server the API accepted should survive an outage shorter than its deadline: the
scheduler killed mid-call (its answer never comes: ``MessagingTimeout``), Placement
restarting, the database refusing connections for a while, the bus failing a cast.
These failures say nothing about the request itself, so the step that hit one is tried
again, after a pause that grows by a second each time, until a deadline or a number of
tries. Everything else (no valid host, not found, a quota, a bad request) is an answer,
and is not retried. The conductor's builds and the compute's deletes both retry here.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar, cast

import oslo_messaging as messaging
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_service import loopingcall

from novalite import exception

LOG = logging.getLogger(__name__)

T = TypeVar('T')

MAX_PAUSE = 10.0
# Seconds the pause grows by after each failed try (tests set it to 0).
PAUSE_STEP = 1.0

TRANSIENT: tuple[type[BaseException], ...] = (
    messaging.MessagingTimeout,
    messaging.MessageDeliveryFailure,
    # Placement unreachable, or answering 5xx (a 4xx is an answer: not retried).
    exception.PlacementAPIConnectFailure,
    exception.PlacementAPIServerError,
    exception.CellUnavailable,
    # Claims racing on the same providers: the generations settle in a moment.
    exception.AllocationConflict,
    # Cinder unreachable (a 5xx or a refusal is an answer).
    exception.CinderConnectionFailed,
    # A process that reaches the database itself.
    db_exc.DBConnectionError,
    db_exc.DBDeadlock,
)

# The exceptions, by class name, that a service's side of a call sends back (as
# oslo.messaging's RemoteError, their modules being none the bus rebuilds) when its
# database is unreachable, out of connections or locked, or Placement is.
_REMOTE_UNAVAILABLE = frozenset({
    'DBConnectionError', 'DBDeadlock', 'DBError', 'OperationalError', 'TimeoutError',
    'DisconnectionError', 'InterfaceError', 'MessagingTimeout',
    'PlacementAPIConnectFailure', 'PlacementAPIServerError', 'CellUnavailable',
    'AllocationConflict', 'CinderConnectionFailed'})


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` says that Placement, the bus or the database is unavailable for
    now (the same call may succeed later), not that the call is wrong."""
    if isinstance(exc, TRANSIENT):
        return True
    if isinstance(exc, messaging.RemoteError):
        return exc.exc_type in _REMOTE_UNAVAILABLE
    return False


class _TryAgain(Exception):
    pass


def call(what: str, func: Callable[[], T], until: float | None = None,
         before_retry: Callable[[], None] | None = None, max_retries: int | None = None,
         max_pause: float = MAX_PAUSE,
         retryable: Callable[[BaseException], bool] = is_transient,
         quiet: bool = False) -> T:
    """``func()``, tried again while it fails transiently, until the monotonic time
    ``until`` or ``max_retries`` more tries (whichever comes first).

    :param what: the step, for the log ("Scheduling 3 servers").
    :param before_retry: undoes what a failed try may have left (a claim) before the
        next; its own transient failure is retried with the step.
    :param retryable: which failures are tried again: an outage by default; a client
        retrying its own kind of failure (a broken download, a generation conflict)
        names it here.
    :param quiet: log the retries at DEBUG, not WARNING (routine ones).
    :raises: the last failure, when it is not transient or the tries are spent.
    """
    def give_up(exc: Exception, tries: int) -> bool:
        pause = min((tries + 1) * PAUSE_STEP, max_pause)
        if not retryable(exc) or (max_retries is not None and tries >= max_retries) or \
                (until is not None and time.monotonic() + pause > until):
            return True
        LOG.log(logging.DEBUG if quiet else logging.WARNING,
                '%s failed (try %d), trying again in %d s: %s: %s', what, tries + 1,
                pause, type(exc).__name__, exc)
        return False

    # The first try runs here, on the caller's thread: most succeed, and the looping
    # call below costs a thread of its own.
    try:
        return func()
    except Exception as exc:
        if give_up(exc, 0):
            raise
    tries = [1]
    paused = [False]

    # A new decorator each call: RetryDecorator counts its tries on itself. Its first
    # round only pauses (the first try failed above). The final failure comes back as a
    # value and is raised here: raised inside, the looping call would log it at ERROR
    # with its traceback, answers such as NotFound included.
    @loopingcall.RetryDecorator(max_retry_count=-1, inc_sleep_time=PAUSE_STEP,
                                max_sleep_time=max_pause, exceptions=(_TryAgain,))
    def attempt() -> tuple[T | None, Exception | None]:
        if not paused[0]:
            paused[0] = True
            raise _TryAgain()
        try:
            if before_retry is not None:
                before_retry()
            return func(), None
        except Exception as exc:
            if give_up(exc, tries[0]):
                return None, exc
            tries[0] += 1
            raise _TryAgain() from exc

    result, error = attempt()
    if error is not None:
        raise error
    return cast(T, result)
