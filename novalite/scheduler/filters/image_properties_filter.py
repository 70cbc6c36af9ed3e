"""ImagePropertiesFilter: hosts whose hypervisor can run what the image asks for."""
from __future__ import annotations

import operator
import re
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import versionutils

from novalite.conf import CONF
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

# Other spellings of the same thing, as Nova canonicalises them.
_ARCH_ALIASES = {'amd64': 'x86_64', 'x64': 'x86_64', 'i386': 'i686', 'i486': 'i686',
                 'i586': 'i686', 'x86_32': 'i686', 'arm64': 'aarch64',
                 'ppc64el': 'ppc64le', 'ppc64be': 'ppc64'}
_HV_TYPE_ALIASES = {'xapi': 'xen'}
_VM_MODE_ALIASES = {'hv': 'hvm', 'baremetal': 'hvm', 'pv': 'xen'}
_COMPARISONS = {'>=': operator.ge, '<=': operator.le, '==': operator.eq,
                '!=': operator.ne, '>': operator.gt, '<': operator.lt}
_PREDICATE = re.compile(r'^\s*(>=|<=|==|!=|>|<)?\s*([0-9][0-9.]*)\s*$')


def _canonical(value: str | None, aliases: dict[str, str]) -> str | None:
    if not value:
        return None
    value = value.lower()
    return aliases.get(value, value)


def version_satisfies(version: int, requirement: str) -> bool:
    """Whether the hypervisor ``version`` (Nova's integer form, 6002000 for 6.2.0)
    meets ``requirement``, e.g. ``>=6.0`` or ``>=6.0, <7``; a bare number means ==.

    An unreadable requirement is not met.
    """
    have = versionutils.convert_version_to_tuple(
        versionutils.convert_version_to_str(version))
    for part in requirement.split(','):
        found = _PREDICATE.match(part)
        if found is None:
            return False
        op, number = found.groups()
        want = tuple(int(n) for n in number.strip('.').split('.'))
        width = max(len(want), len(have))
        padded = have + (0,) * (width - len(have))
        if not _COMPARISONS[op or '=='](padded, want + (0,) * (width - len(want))):
            return False
    return True


class ImagePropertiesFilter(filters.BaseHostFilter):
    """Hosts whose supported instances match the image's ``hw_architecture``,
    ``img_hv_type`` and ``hw_vm_mode``, and whose hypervisor version meets
    ``img_hv_requested_version``.

    An image naming none of the three passes everywhere; an image naming one fails on
    a host that reports no supported instances.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        image = spec_obj.image if spec_obj.obj_attr_is_set('image') else None
        props = (image.properties if image is not None and image.obj_attr_is_set('properties')
                 else None) or {}
        wanted = (
            _canonical(props.get('hw_architecture')
                       or CONF.filter_scheduler.image_properties_default_architecture,
                       _ARCH_ALIASES),
            _canonical(props.get('img_hv_type'), _HV_TYPE_ALIASES),
            _canonical(props.get('hw_vm_mode'), _VM_MODE_ALIASES))
        if not any(wanted):
            return True
        for supported in host_state.supported_instances:
            offered = [_canonical(v, {}) for v in supported]
            if all(w is None or w in offered for w in wanted) \
                    and self._version_ok(host_state, props.get('img_hv_requested_version')):
                return True
        LOG.debug('%s supports %s, not %s (version %s)', host_state,
                  host_state.supported_instances, wanted,
                  props.get('img_hv_requested_version'))
        return False

    @staticmethod
    def _version_ok(host_state: HostState, requirement: str | None) -> bool:
        if not requirement or not host_state.hypervisor_version:
            return True
        return version_satisfies(host_state.hypervisor_version, requirement)
