"""AvailabilityZoneFilter: only hosts in the availability zone the request names."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import filters


class AvailabilityZoneFilter(filters.BaseHostFilter):
    """Pass every host when the request names no zone, else hosts of that zone."""

    def host_passes(self, host_state: Any, spec_obj: Any) -> bool:
        wanted = (spec_obj.availability_zone
                  if spec_obj.obj_attr_is_set('availability_zone') else None)
        return not wanted or wanted == host_state.availability_zone
