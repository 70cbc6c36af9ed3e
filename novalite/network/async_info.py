"""Network info still being allocated: ports made while the guest is prepared.

A build asks Neutron for its ports on a thread of a small pool and goes on (the
Placement read, the image download of ``spawn``); ``AsyncNetworkInfo`` stands for the
result and waits for it on first use, as Nova's ``NetworkInfoAsyncWrapper``. A driver
that never looks at its network info (the fake driver) never waits; the build waits
before it reports the server ACTIVE.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import SupportsIndex, overload

import futurist

from novalite.network import model

_POOL: futurist.ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
# Port work of concurrent builds on one host; more builds wait for a thread.
POOL_SIZE = 8


def _pool() -> futurist.ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = futurist.ThreadPoolExecutor(max_workers=POOL_SIZE)
        return _POOL


class AsyncNetworkInfo(list[model.VIF]):
    """A network info list whose content arrives from ``allocate`` run in the
    background; reading it waits, and raises what ``allocate`` raised."""

    def __init__(self, allocate: Callable[[], model.NetworkInfo]) -> None:
        super().__init__()
        self._future: futures.Future[model.NetworkInfo] = _pool().submit(allocate)
        self._resolved = False

    def wait(self) -> model.NetworkInfo:
        """The network info (a plain list); raises the allocation's error."""
        if not self._resolved:
            result = self._future.result()
            list.extend(self, result)
            self._resolved = True
        return list(list.__iter__(self))

    def wait_quietly(self) -> model.NetworkInfo:
        """The network info, or [] when the allocation failed (it cleaned up itself)."""
        try:
            return self.wait()
        except Exception:
            return []

    def __iter__(self) -> Iterator[model.VIF]:
        return iter(self.wait())

    def __len__(self) -> int:
        return len(self.wait())

    def __bool__(self) -> bool:
        return bool(self.wait())

    @overload
    def __getitem__(self, index: SupportsIndex) -> model.VIF: ...

    @overload
    def __getitem__(self, index: slice) -> list[model.VIF]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> model.VIF | list[model.VIF]:
        return self.wait()[index]

    def __contains__(self, item: object) -> bool:
        return item in self.wait()

    def __eq__(self, other: object) -> bool:
        return self.wait() == other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self.wait()) if self._future.done() else '<network info pending>'
