"""ComputeFilter: only hosts whose compute service is enabled and up."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import servicegroup
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)


class ComputeFilter(filters.BaseHostFilter):
    """Refuse hosts whose compute service is missing, disabled or not heartbeating."""

    def __init__(self) -> None:
        self.servicegroup_api = servicegroup.API()

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        service = host_state.service
        if service is None:
            LOG.debug('%s has no compute service record', host_state)
            return False
        if service.disabled:
            LOG.debug('%s is disabled: %s', host_state, service.disabled_reason)
            return False
        if not self.servicegroup_api.service_is_up(service):
            LOG.warning('%s has not been heard from in a while', host_state)
            return False
        return True
