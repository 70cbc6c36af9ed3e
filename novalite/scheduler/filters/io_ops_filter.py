"""IoOpsFilter: hosts with fewer than ``max_io_ops_per_host`` I/O-heavy operations."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)


class IoOpsFilter(filters.BaseHostFilter):
    """Refuse hosts already running ``[filter_scheduler] max_io_ops_per_host`` builds,
    resizes, snapshots and the like at once."""

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        limit = CONF.filter_scheduler.max_io_ops_per_host
        if host_state.num_io_ops < limit:
            return True
        LOG.debug('%s has %d I/O-heavy operations, the most allowed is %d', host_state,
                  host_state.num_io_ops, limit)
        return False
