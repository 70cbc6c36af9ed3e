"""NumInstancesFilter: hosts running fewer than ``max_instances_per_host`` instances."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)


class NumInstancesFilter(filters.BaseHostFilter):
    """Refuse hosts that already run ``[filter_scheduler] max_instances_per_host``."""

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        limit = CONF.filter_scheduler.max_instances_per_host
        if host_state.num_instances < limit:
            return True
        LOG.debug('%s runs %d instances, the most allowed is %d', host_state,
                  host_state.num_instances, limit)
        return False
