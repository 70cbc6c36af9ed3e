"""Service binaries as the Compute API names them (Nova's) and as novalite records them.

The daemons, their service rows and their systemd units keep their novalite names; the
API shows Nova's (what clients, scripts and conformance suites look for) and takes
either name in filters and request bodies.
"""
from __future__ import annotations

_API_NAMES = {
    'novalite-compute': 'nova-compute',
    'novalite-conductor': 'nova-conductor',
    'novalite-scheduler': 'nova-scheduler',
}
_RECORDED_NAMES = {api: recorded for recorded, api in _API_NAMES.items()}

# The one binary whose services the API lets an operator enable, disable or force down.
COMPUTE = 'nova-compute'


def to_api(binary: str | None) -> str | None:
    """The name the API shows for a recorded binary (others as they are)."""
    if binary is None:
        return None
    return _API_NAMES.get(binary, binary)


def to_recorded(binary: str) -> str:
    """The recorded binary a client means: Nova's name or novalite's own."""
    return _RECORDED_NAMES.get(binary, binary)


def is_compute(binary: str | None) -> bool:
    """Whether a client's (or a recorded) binary names the compute service."""
    return binary is not None and to_api(to_recorded(binary)) == COMPUTE
