"""ComputeCapabilitiesFilter: flavor ``capabilities:`` extra specs against the host."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite.scheduler import filters
from novalite.scheduler.filters import extra_specs_ops

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

SCOPE = 'capabilities'


def _capability(host_state: HostState, path: list[str]) -> object:
    """Follow ``path`` from the host state: attributes, then its stats, then into dicts
    (JSON strings such as ``cpu_info`` are decoded on the way)."""
    value: Any = host_state
    for name in path:
        if isinstance(value, str):
            try:
                value = jsonutils.loads(value)
            except ValueError:
                return None
        if isinstance(value, dict):
            value = value.get(name)
        elif getattr(value, name, None) is not None:
            value = getattr(value, name)
        else:
            value = getattr(value, 'stats', {}).get(name)
        if value is None:
            return None
    return value


class ComputeCapabilitiesFilter(filters.BaseHostFilter):
    """Hosts whose capabilities satisfy every ``capabilities:NAME`` extra spec.

    ``capabilities:hypervisor_type=s== QEMU`` compares the host state's attribute
    ``hypervisor_type``; a name that is no attribute is looked up in the compute node's
    stats; ``capabilities:cpu_info:arch`` walks into a JSON field. Unscoped keys are
    checked only when the host has such an attribute or stat (Nova's older form);
    keys of other scopes (``hw:``, ``resources:``, ``trait:``...) are not this filter's.
    The values use the operators of ``extra_specs_ops``.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        flavor = spec_obj.flavor
        extra_specs = (flavor.extra_specs if flavor.obj_attr_is_set('extra_specs') else None)
        for key, requirement in (extra_specs or {}).items():
            path = key.split(':')
            if len(path) == 1:
                if not hasattr(host_state, key) and key not in host_state.stats:
                    continue
            elif path[0] != SCOPE:
                continue
            else:
                path = path[1:]
            value = _capability(host_state, path)
            if value is None or not extra_specs_ops.match(str(value), requirement):
                LOG.debug('%s fails extra spec %s=%s (has %s)', host_state, key,
                          requirement, value)
                return False
        return True
