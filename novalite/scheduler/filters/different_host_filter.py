"""DifferentHostFilter: no host running an instance of the ``different_host`` hint."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import filters


class DifferentHostFilter(filters.BaseHostFilter):
    """With the ``different_host`` scheduler hint (instance uuids), the hosts running
    any of them are refused; without it, every host passes."""

    def host_passes(self, host_state: Any, spec_obj: Any) -> bool:
        uuids = filters.scheduler_hint_list(spec_obj, 'different_host')
        return not host_state.instances.intersection(uuids)
