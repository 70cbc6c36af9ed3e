"""Validation of flavor extra specs in the namespaces novalite knows (from 2.86).

A key is matched against the table of known specs (a regular expression each, with the
kind of value it takes). A key of a known namespace that matches no entry is an error,
because it is most likely a typo; keys without a namespace or in other namespaces are
left alone, since out-of-tree filters and drivers read specs of their own.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from oslo_utils import strutils

from novalite import exception

_BOOL = 'bool'

# A resource class: standard (VCPU, MEMORY_MB...) or CUSTOM_*; a trait likewise.
_RC = r'[A-Z][A-Z0-9_]*'
_TRAIT = r'[a-zA-Z0-9_]+'
_GROUP = r'([a-zA-Z0-9_-]{1,64})?'


def _int(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            number = int(value)
        except ValueError:
            return 'must be an integer'
        if minimum is not None and number < minimum:
            return 'must be greater than or equal to %d' % minimum
        if maximum is not None and number > maximum:
            return 'must be less than or equal to %d' % maximum
        return ''
    return check


def _enum(*values: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        return '' if value in values else 'must be one of %s' % ', '.join(values)
    return check


def _bool(value: str) -> str:
    try:
        strutils.bool_from_string(value, strict=True)
    except ValueError:
        return 'must be a boolean'
    return ''


def _pattern(regex: str, what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        return '' if re.fullmatch(regex, value) else 'must be %s' % what
    return check


def _any(value: str) -> str:
    return ''


_PAGE_SIZE = _pattern(r'(small|large|any|\d+([kKmMgG][bB]?|[kKmMgG]i[bB])?)',
                      'small, large, any or a page size such as 2048, 2MB or 1GB')
_CPU_SET = _pattern(r'\^?\d+(-\d+)?(,\^?\d+(-\d+)?)*', 'a CPU set such as 0-3,^2')

# (key regex, value check). The namespace of each key is what precedes the first colon.
KNOWN: list[tuple[str, Callable[[str], str]]] = [
    (r'hw:cpu_policy', _enum('dedicated', 'shared', 'mixed')),
    (r'hw:cpu_thread_policy', _enum('prefer', 'isolate', 'require')),
    (r'hw:emulator_threads_policy', _enum('share', 'isolate')),
    (r'hw:cpu_(sockets|cores|threads|max_sockets|max_cores|max_threads)', _int(1)),
    (r'hw:cpu_realtime', _bool),
    (r'hw:cpu_realtime_mask', _pattern(r'\^?\d+(-\d+)?(,\^?\d+(-\d+)?)*', 'a CPU mask')),
    (r'hw:cpu_dedicated_mask', _CPU_SET),
    (r'hw:mem_page_size', _PAGE_SIZE),
    (r'hw:numa_nodes', _int(1)),
    (r'hw:numa_cpus\.\d+', _CPU_SET),
    (r'hw:numa_mem\.\d+', _int(0)),
    (r'hw:pci_numa_affinity_policy', _enum('required', 'preferred', 'legacy', 'socket')),
    (r'hw:(boot_menu|pmu|mem_encryption|vif_multiqueue_enabled|hide_hypervisor_id|'
     r'locked_memory|virtio_packed_ring)', _bool),
    (r'hw:watchdog_action', _enum('none', 'pause', 'poweroff', 'reset', 'disabled')),
    (r'hw:serial_port_count', _int(0)),
    (r'hw:tpm_version', _enum('1.2', '2.0')),
    (r'hw:tpm_model', _enum('tpm-tis', 'tpm-crb')),
    (r'hw:maxphysaddr_mode', _enum('emulate', 'passthrough')),
    (r'hw:maxphysaddr_bits', _int(1)),
    (r'hw:mem_encryption_model', _enum('amd-sev', 'amd-sev-es')),
    (r'hw:viommu_model', _enum('intel', 'smmuv3', 'virtio', 'auto')),
    (r'hw:ephemeral_encryption', _bool),
    (r'hw:ephemeral_encryption_format', _enum('luks')),
    (r'hw_rng:allowed', _bool),
    (r'hw_rng:(rate_bytes|rate_period)', _int(0)),
    (r'hw_video:ram_max_mb', _int(0)),
    (r'os:secure_boot', _enum('required', 'disabled', 'optional')),
    (r'quota:(cpu_(shares|period|quota|limit|reservation)|'
     r'(disk|vif)_\w+|memory_\w+)', _int(0)),
    (r'resources%s:%s' % (_GROUP, _RC), _int(0)),
    (r'trait%s:%s' % (_GROUP, _TRAIT), _enum('required', 'forbidden')),
    (r'group_policy', _enum('isolate', 'none')),
    (r'accel:device_profile', _any),
    (r'pci_passthrough:alias', _pattern(r'[^:,]+:\d+(,[^:,]+:\d+)*',
                                        'a list of alias:count')),
    (r'aggregate_instance_extra_specs:.+', _any),
    (r'capabilities:.+', _any),
]

# Namespaces that are fully described above; "resources1" belongs to "resources".
_NAMESPACES = re.compile(r'(hw|hw_rng|hw_video|os|quota|resources%s|trait%s|accel|'
                         r'pci_passthrough)' % (_GROUP, _GROUP))


def validate(name: str, value: str) -> None:
    """Check one extra spec.

    :raises ValidationError: a known spec with a bad value, or an unknown spec of a known
        namespace
    """
    for regex, check in KNOWN:
        if re.fullmatch(regex, name):
            problem = check(str(value))
            if problem:
                raise exception.ValidationError(
                    detail="Validation failed; extra spec '%s' %s, got '%s'."
                    % (name, problem, value))
            return
    if ':' in name and _NAMESPACES.fullmatch(name.split(':', 1)[0]):
        raise exception.ValidationError(
            detail="Validation failed; extra spec '%s' does not appear to be a valid "
                   "extra spec." % name)
