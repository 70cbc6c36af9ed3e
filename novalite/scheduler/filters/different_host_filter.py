"""DifferentHostFilter: no host running an instance of the ``different_host`` hint."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class DifferentHostFilter(filters.BaseHostFilter):
    """With the ``different_host`` scheduler hint (instance uuids), the hosts running
    any of them are refused; without it, every host passes."""

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        uuids = filters.scheduler_hint_list(spec_obj, 'different_host')
        return not host_state.instances.intersection(uuids)
