"""AggregateInstanceExtraSpecsFilter: flavor extra specs against aggregate metadata."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.scheduler import filters
from novalite.scheduler.filters import extra_specs_ops

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

SCOPE = 'aggregate_instance_extra_specs'


class AggregateInstanceExtraSpecsFilter(filters.BaseHostFilter):
    """Hosts whose aggregates' metadata satisfies the flavor's extra specs.

    Keys scoped ``aggregate_instance_extra_specs:KEY`` and unscoped keys are checked
    (unscoped as Nova does, for old flavors); other scopes are left to their filters.
    One of the host's aggregates having a matching value for the key is enough.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        flavor = spec_obj.flavor
        extra_specs = (flavor.extra_specs if flavor.obj_attr_is_set('extra_specs') else None)
        if not extra_specs:
            return True
        metadata = filters.aggregate_metadata(host_state)
        for key, requirement in extra_specs.items():
            scope, _, name = key.partition(':')
            if name and scope != SCOPE:
                continue
            name = name or scope
            values = metadata.get(name)
            if not values:
                LOG.debug('%s: no aggregate has metadata %s', host_state, name)
                return False
            if not any(extra_specs_ops.match(v, requirement) for v in values):
                LOG.debug('%s: aggregate metadata %s=%s does not match %s', host_state,
                          name, sorted(values), requirement)
                return False
        return True
