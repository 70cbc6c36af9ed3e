"""Small helpers shared by the services."""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.objects import base as obj_base

LOG = logging.getLogger(__name__)
_HOPS = logging.getLogger('novalite.hops')


def hop(name: str, instance_uuids: Any, at: float | None = None) -> None:
    """Log that the boot of ``instance_uuids`` (one uuid or several) reached hop
    ``name``, at wall-clock time ``at`` (now by default), when ``[DEFAULT]
    log_boot_hops`` is on. Processes share the clock: bench/boot_hops.py lines the hops
    of every daemon's log up per instance."""
    if not CONF.log_boot_hops:
        return
    when = time.time() if at is None else at
    for uuid in [instance_uuids] if isinstance(instance_uuids, str) else instance_uuids:
        _HOPS.info('boot hop %s %s %.6f', name, uuid, when)

# Threads spawn() started that still run: a graceful stop waits for them.
_LIVE: set[threading.Thread] = set()
_LIVE_LOCK = threading.Lock()


def spawn(fn: Callable, *args: Any, **kwargs: Any) -> threading.Thread:
    """Run ``fn`` on a new daemon thread that inherits this thread's object indirection
    (so work a compute endpoint hands off still reaches the DB through the conductor)."""
    api = obj_base.current_indirection_api()

    def run() -> None:
        try:
            if api is not None:
                with obj_base.indirection(api):
                    fn(*args, **kwargs)
            else:
                fn(*args, **kwargs)
        except Exception:
            LOG.exception('Unhandled error in thread running %s', getattr(fn, '__name__', fn))
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(threading.current_thread())

    thread = threading.Thread(target=run, daemon=True)
    with _LIVE_LOCK:
        _LIVE.add(thread)
    thread.start()
    return thread


def wait_spawned(timeout: float) -> None:
    """Join the threads spawn() started that still run, within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    with _LIVE_LOCK:
        threads = list(_LIVE)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def sanitize_hostname(name: str, default: str = 'server') -> str:
    """A DNS label made from a display name, as Nova derives instance hostnames."""
    hostname = name.lower()
    hostname = re.sub(r'[ _.]', '-', hostname)
    hostname = re.sub(r'[^\w-]+', '', hostname, flags=re.ASCII)
    hostname = hostname.strip('-')[:63].rstrip('-')
    return hostname or default


def generate_reservation_id() -> str:
    import random
    import string
    return 'r-' + ''.join(random.choices(string.ascii_lowercase + string.digits, k=8))
