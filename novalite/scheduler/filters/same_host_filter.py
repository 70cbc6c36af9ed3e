"""SameHostFilter: only hosts running one of the instances of the ``same_host`` hint."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState


class SameHostFilter(filters.BaseHostFilter):
    """With the ``same_host`` scheduler hint (instance uuids), only the hosts that run
    at least one of them pass; without it, every host."""

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        uuids = filters.scheduler_hint_list(spec_obj, 'same_host')
        return not uuids or bool(host_state.instances.intersection(uuids))
