"""AvailabilityZoneFilter: only hosts in the availability zone the request names."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

AZ_KEY = 'availability_zone'


class AvailabilityZoneFilter(filters.BaseHostFilter):
    """Pass every host when the request names no zone, else the hosts of that zone.

    A host's zones are the ``availability_zone`` metadata of its aggregates; a host in
    no zoned aggregate is in ``[DEFAULT] default_availability_zone``.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        wanted = (spec_obj.availability_zone
                  if spec_obj.obj_attr_is_set('availability_zone') else None)
        if not wanted:
            return True
        zones = filters.aggregate_metadata(host_state, AZ_KEY).get(
            AZ_KEY, {CONF.default_availability_zone})
        if wanted in zones:
            return True
        LOG.debug('%s is in zone(s) %s, not %s', host_state, ', '.join(sorted(zones)),
                  wanted)
        return False
