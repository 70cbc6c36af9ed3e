"""The TCP ports of guests' serial consoles on this compute host, as Nova's
``console/serial.py`` hands them out.

A port of ``[serial_console] port_range`` is given to one guest at a time: this
process remembers which (host address, port) pairs its guests hold, and a port some
other program listens on is skipped. A guest keeps its port while its domain is defined
(stopped, rebooted, rescued, resized on the same host); ``release_port`` gives it back
when the domain goes. The domains already defined when the compute starts hold theirs
again (``reserve_ports``), so a restart does not hand a stopped guest's port to another.
"""
from __future__ import annotations

import socket
import threading
import xml.etree.ElementTree as ET

from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

DEFAULT_PORT_RANGE = '10000:20000'

_lock = threading.Lock()
# (address, port) pairs the guests of this process hold.
_allocated: set[tuple[str, int]] = set()


def port_range() -> tuple[int, int]:
    """``[serial_console] port_range`` as (first, last + 1); the default range, with a
    warning, when the first port is not below the last (as Nova)."""
    configured = CONF.serial_console.port_range
    start, stop = (int(part) for part in configured.split(':'))
    if start >= stop:
        LOG.warning('[serial_console] port_range %s is not <start>:<stop> with start < '
                    'stop; using %s', configured, DEFAULT_PORT_RANGE)
        start, stop = (int(part) for part in DEFAULT_PORT_RANGE.split(':'))
    return start, stop


def acquire_port(host: str) -> int:
    """A port of the range that no guest of this process holds and nothing listens on
    at ``host``; it is held until ``release_port``.

    :raises ConsolePortRangeExhausted: every port of the range is taken
    """
    start, stop = port_range()
    with _lock:
        for port in range(start, stop):
            if (host, port) in _allocated:
                continue
            if not _bindable(host, port):
                continue
            _allocated.add((host, port))
            return port
    raise exception.ConsolePortRangeExhausted(min_port=start, max_port=stop)


def release_port(host: str, port: int) -> None:
    """Let ``port`` at ``host`` go to the next guest (nothing if it was not held)."""
    with _lock:
        _allocated.discard((host, port))


def reserve_ports(ports: list[tuple[str, int]]) -> None:
    """Hold ports that defined domains already use (found in their XML)."""
    with _lock:
        _allocated.update(ports)


def held_ports() -> set[tuple[str, int]]:
    """The (address, port) pairs held now (a copy)."""
    with _lock:
        return set(_allocated)


def tcp_ports(domain_xml: str) -> list[tuple[str, int]]:
    """The (address, port) of each serial port of a domain that listens on TCP, in
    the domain's order (the first one carries the console log)."""
    ports = []
    for source in ET.fromstring(domain_xml).findall(
            "devices/serial[@type='tcp']/source[@mode='bind']"):
        service = source.get('service')
        if service is not None and service.isdigit():
            ports.append((source.get('host') or '0.0.0.0', int(service)))
    return ports


def rebind_ports(domain_xml: str) -> tuple[str, list[tuple[str, int]]]:
    """A domain XML that comes from another host (a resize or cold migration) keeps the
    ports it holds here; each port it does not hold here is replaced by one acquired
    here (the other host's port may be taken on this one). Returns the XML and the
    ports acquired for it.

    :raises ConsolePortRangeExhausted: (nothing is left acquired)
    """
    held = held_ports()
    moved = [p for p in tcp_ports(domain_xml) if p not in held]
    if not moved:
        return domain_xml, []
    host = CONF.serial_console.proxyclient_address
    new: dict[tuple[str, int], int] = {}
    try:
        for old in moved:
            new[old] = acquire_port(host)
    except exception.ConsolePortRangeExhausted:
        for port in new.values():
            release_port(host, port)
        raise
    domain = ET.fromstring(domain_xml)
    # A live XML repeats the first serial port as <console>: both move.
    for source in (domain.findall("devices/serial[@type='tcp']/source") +
                   domain.findall("devices/console[@type='tcp']/source")):
        key = (source.get('host') or '0.0.0.0', int(source.get('service') or 0))
        if key in new:
            source.set('host', host)
            source.set('service', str(new[key]))
    return ET.tostring(domain, encoding='unicode'), [(host, p) for p in new.values()]


def _bindable(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            LOG.debug('Serial console port %d on %s is in use: %s', port, host, exc)
            return False
    return True
