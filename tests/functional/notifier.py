"""Catching versioned notifications in the in-process stack: the stack's notifier on
oslo.messaging's ``test`` driver, which keeps what it is given."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import oslo_messaging as messaging
from oslo_messaging.notify import _impl_test

from novalite import rpc


@contextlib.contextmanager
def kept() -> Iterator[list]:
    """Within the block, notifications are kept in the returned list of
    ``(context, message, priority, retry)`` (oslo.messaging's test driver's list)."""
    real = rpc.NOTIFIER
    rpc.NOTIFIER = messaging.Notifier(rpc.NOTIFICATION_TRANSPORT, driver='test',
                                      serializer=rpc._serializer(), publisher_id='novalite',
                                      topics=['versioned_notifications'])
    _impl_test.reset()
    try:
        yield _impl_test.NOTIFICATIONS
    finally:
        rpc.NOTIFIER = real
        _impl_test.reset()
