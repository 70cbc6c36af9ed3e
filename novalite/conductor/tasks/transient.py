"""Retrying what a short outage breaks, until a build's deadline.

A build the API accepted should survive an outage shorter than its deadline: the
scheduler killed mid-call (its answer never comes: ``MessagingTimeout``), Placement
restarting, the database refusing connections for a while, the bus failing a cast.
These failures say nothing about the build itself, so the step that hit one is tried
again, after a pause that grows by a second each time (at most ``MAX_PAUSE``), until
``[conductor] build_retry_timeout`` has passed since the build started. Everything else
(no valid host, a quota, a bad request) is an answer, and is not retried.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import oslo_messaging as messaging
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_service import loopingcall

from novalite import exception
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

T = TypeVar('T')

MAX_PAUSE = 10

TRANSIENT: tuple[type[BaseException], ...] = (
    messaging.MessagingTimeout,
    messaging.MessageDeliveryFailure,
    exception.PlacementAPIConnectFailure,
    db_exc.DBConnectionError,
    db_exc.DBDeadlock,
)


def is_transient(exc: BaseException) -> bool:
    """True for the failures an outage causes, wherever they were raised: here, or in
    the service a call went to (then they come back as a ``RemoteError`` naming them
    when their module is not one the bus may rebuild exceptions from)."""
    if isinstance(exc, TRANSIENT):
        return True
    if isinstance(exc, messaging.RemoteError):
        return exc.exc_type in {cls.__name__ for cls in TRANSIENT}
    return False


def deadline() -> float:
    """The monotonic time a build started now stops retrying at."""
    return time.monotonic() + CONF.conductor.build_retry_timeout


class _TryAgain(Exception):
    pass


def call(what: str, func: Callable[[], T], until: float,
         before_retry: Callable[[], None] | None = None) -> T:
    """``func()``, tried again while it fails transiently and ``until`` allows.

    :param what: the step, for the log ("scheduling 3 servers").
    :param until: a ``time.monotonic()`` deadline (see :func:`deadline`).
    :param before_retry: undoes what a failed try may have left (a claim) before the
        next; its own transient failure is retried with the step.
    :raises: the last failure, once the deadline has passed or it is not transient.
    """
    tries = [0]

    # The final failure comes back as a value and is raised here: raised inside, the
    # looping call would log it at ERROR with its traceback, answers included.
    @loopingcall.RetryDecorator(max_retry_count=-1, inc_sleep_time=1,
                                max_sleep_time=MAX_PAUSE, exceptions=(_TryAgain,))
    def attempt() -> tuple[T | None, Exception | None]:
        try:
            if tries[0] and before_retry is not None:
                before_retry()
            return func(), None
        except Exception as exc:
            pause = min(tries[0] + 1, MAX_PAUSE)
            if not is_transient(exc) or time.monotonic() + pause > until:
                return None, exc
            tries[0] += 1
            LOG.warning('%s failed (try %d), trying again in %d s: %s', what, tries[0],
                        pause, exc)
            raise _TryAgain() from exc

    result, error = attempt()
    if error is not None:
        raise error
    return result  # type: ignore[return-value]
