"""The standard diagnostics of a guest (Compute API 2.48), as plain dicts that cross RPC.

A driver builds one with :func:`new` and fills the details lists; every detail carries
all its keys, None where the hypervisor does not tell.
"""
from __future__ import annotations

from typing import Any

CPU_KEYS = ('id', 'time', 'utilisation')
NIC_KEYS = ('mac_address', 'rx_octets', 'rx_errors', 'rx_drop', 'rx_packets', 'rx_rate',
            'tx_octets', 'tx_errors', 'tx_drop', 'tx_packets', 'tx_rate')
DISK_KEYS = ('read_bytes', 'read_requests', 'write_bytes', 'write_requests', 'errors_count')
# The API's enum of drivers (Nova's DiagnosticsDriver); a test double names a real one,
# as Nova's fake driver reports 'libvirt'.
DRIVERS = ('libvirt', 'xenapi', 'vmwareapi', 'hyperv', 'ironic')
# A counter, a rate, a MAC address or an id; None where the hypervisor does not tell.
DetailValue = int | float | str | None


def new(state: str, driver: str, hypervisor: str | None = None,
        hypervisor_os: str | None = None, uptime: int | None = None,
        config_drive: bool = False, memory_maximum_mb: int | None = None,
        memory_used_mb: int | None = None) -> dict[str, Any]:
    """:param state: the power state's name ('running', 'shutdown', ...)
    :param driver: one of :data:`DRIVERS`
    :raises ValueError: a driver the API cannot name
    """
    if driver not in DRIVERS:
        raise ValueError('diagnostics driver %r is not one of %s' % (driver, DRIVERS))
    return {'state': state, 'driver': driver, 'hypervisor': hypervisor,
            'hypervisor_os': hypervisor_os, 'uptime': uptime, 'config_drive': config_drive,
            'cpu_details': [], 'nic_details': [], 'disk_details': [],
            'memory_details': {'maximum': memory_maximum_mb, 'used': memory_used_mb}}


def _detail(keys: tuple[str, ...], values: dict[str, DetailValue]
            ) -> dict[str, DetailValue]:
    unknown = set(values) - set(keys)
    if unknown:
        raise ValueError('unknown diagnostics keys: %s' % ', '.join(sorted(unknown)))
    return {key: values.get(key) for key in keys}


def add_cpu(diags: dict, **values: DetailValue) -> None:
    diags['cpu_details'].append(_detail(CPU_KEYS, values))


def add_nic(diags: dict, **values: DetailValue) -> None:
    diags['nic_details'].append(_detail(NIC_KEYS, values))


def add_disk(diags: dict, **values: DetailValue) -> None:
    diags['disk_details'].append(_detail(DISK_KEYS, values))


def legacy(diags: dict) -> dict[str, Any]:
    """The free-form dict of microversions before 2.48, flattened from the standard
    format with the key names Nova's libvirt driver used (memory in KiB)."""
    flat: dict[str, Any] = {}
    for cpu in diags['cpu_details']:
        flat['cpu%s_time' % cpu['id']] = cpu['time']
    if diags['memory_details'].get('maximum') is not None:
        flat['memory'] = diags['memory_details']['maximum'] * 1024
    for index, disk in enumerate(diags['disk_details']):
        name = 'vd%s' % chr(ord('a') + index)
        flat.update({name + '_read': disk['read_bytes'],
                     name + '_read_req': disk['read_requests'],
                     name + '_write': disk['write_bytes'],
                     name + '_write_req': disk['write_requests'],
                     name + '_errors': disk['errors_count']})
    for index, nic in enumerate(diags['nic_details']):
        name = 'vnet%d' % index
        for key in ('rx', 'tx'):
            flat[name + '_' + key] = nic[key + '_octets']
            for counter in ('drop', 'errors', 'packets'):
                flat['%s_%s_%s' % (name, key, counter)] = nic['%s_%s' % (key, counter)]
    return flat
