"""Small helpers shared by the services."""
from __future__ import annotations

import re
import time
from typing import Any

from oslo_log import log as logging

from novalite.conf import CONF

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
