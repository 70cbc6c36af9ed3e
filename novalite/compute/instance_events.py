"""Waiting for other services' events about an instance (``network-vif-plugged``,
``volume-reimaged``).

A driver that plugs VIFs asks, before it plugs, to be told of Neutron's events for
those ports, then waits for them after it plugged (``ComputeVirtAPI``). The events
arrive through the API's ``os-server-external-events`` as a cast to this host; the
manager hands them to ``InstanceEvents.pop`` at once, without the instance lock (the
waiting build holds it). An event nobody waits for is dropped: Neutron sends
``network-vif-plugged`` twice, and for ports of instances not being built.
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

EventKey = tuple[str, str | None]   # (name, tag), e.g. ('network-vif-plugged', port id)


class InstanceLike(Protocol):
    uuid: str


class WaitCancelled(exception.NovaliteException):
    """The instance is being deleted: nothing is worth waiting for any more."""

    msg_fmt = 'Instance %(instance_uuid)s is being deleted; the wait for its events ended.'


class _Waiter:
    """One expected event: set by the event's arrival, with its status."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.status: str | None = None

    def wait(self, timeout: float) -> str | None:
        """The event's status once it arrived (``cancelled``: the instance is being
        deleted); None when ``timeout`` seconds passed first."""
        return self.status if self.arrived.wait(max(0.0, timeout)) else None


class InstanceEvents:
    """The events each instance waits for, on this host."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, dict[EventKey, _Waiter]] = {}

    def prepare(self, instance_uuid: str, key: EventKey) -> _Waiter:
        with self._lock:
            waiter = _Waiter()
            self._waiting.setdefault(instance_uuid, {})[key] = waiter
            return waiter

    def pop(self, instance_uuid: str, name: str, tag: str | None, status: str) -> bool:
        """Deliver an event; False when nobody was waiting for it."""
        with self._lock:
            waiter = self._waiting.get(instance_uuid, {}).pop((name, tag), None)
        if waiter is None:
            return False
        waiter.status = status
        waiter.arrived.set()
        return True

    @contextlib.contextmanager
    def expecting(self, instance_uuid: str, key: EventKey) -> Iterator[_Waiter]:
        """Be told of one event while the block runs (the block asks for what makes
        another service send it, then waits); after the block it is nobody's."""
        waiter = self.prepare(instance_uuid, key)
        try:
            yield waiter
        finally:
            self.pop(instance_uuid, key[0], key[1], 'abandoned')

    def clear(self, instance_uuid: str) -> None:
        """Stop waiting for anything of this instance (it is being deleted): each
        waiter wakes with status ``cancelled``, and its wait raises ``WaitCancelled``.
        Called before the delete takes the instance lock, which a build waiting for
        its VIFs holds."""
        with self._lock:
            waiters = self._waiting.pop(instance_uuid, {})
        for waiter in waiters.values():
            waiter.status = 'cancelled'
            waiter.arrived.set()


ErrorCallback = Callable[[str, InstanceLike], None]


class ComputeVirtAPI:
    """What a driver may ask of its compute manager."""

    def __init__(self, events: InstanceEvents) -> None:
        self._events = events

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance: InstanceLike, event_keys: list[EventKey],
                                deadline: int = 300,
                                error_callback: ErrorCallback | None = None
                                ) -> Iterator[None]:
        """Register for ``event_keys``, run the block (which plugs), then wait for them
        all until ``deadline`` seconds after the block ended.

        :raises VirtualInterfaceCreateException: an event failed and there is no
            ``error_callback`` (which otherwise decides), or the deadline passed while
            ``[DEFAULT] vif_plugging_is_fatal`` is true.
        """
        waiters = {key: self._events.prepare(instance.uuid, key) for key in event_keys}
        try:
            yield
            ends = time.monotonic() + deadline
            for (name, tag), waiter in waiters.items():
                if not waiter.arrived.wait(max(0.0, ends - time.monotonic())):
                    self._timed_out(instance, name, tag, deadline)
                    return
                if waiter.status == 'cancelled':
                    raise WaitCancelled(instance_uuid=instance.uuid)
                if waiter.status != 'completed':
                    # The driver's callback raises when the failure is fatal.
                    if error_callback is None:
                        raise exception.VirtualInterfaceCreateException(
                            reason='Neutron reported %s %s for port %s'
                            % (name, waiter.status, tag))
                    error_callback(name, instance)
        finally:
            for name, tag in waiters:
                self._events.pop(instance.uuid, name, tag, 'abandoned')

    @staticmethod
    def _timed_out(instance: InstanceLike, name: str, tag: str | None, deadline: int) -> None:
        message = 'Timeout waiting for %s of port %s after %d s' % (name, tag, deadline)
        if CONF.vif_plugging_is_fatal:
            raise exception.VirtualInterfaceCreateException(
                reason=message + ': Neutron did not report the port up')
        LOG.warning('%s for instance %s; continuing ([DEFAULT] vif_plugging_is_fatal '
                    '= false)', message, instance.uuid)
