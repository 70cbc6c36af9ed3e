"""ServerGroupAffinityFilter: members of an affinity group all go to one host."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

POLICY = 'affinity'


class ServerGroupAffinityFilter(filters.BaseHostFilter):
    """For a group with the ``affinity`` policy: once a member runs somewhere, only the
    group's hosts pass; the first member may go anywhere."""

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        group = filters.instance_group(spec_obj)
        if group is None or group.policy != POLICY:
            return True
        hosts = group.hosts if group.obj_attr_is_set('hosts') else []
        if not hosts or host_state.host in hosts:
            return True
        LOG.debug('%s is not a host of affinity group %s (%s)', host_state, group.uuid,
                  ', '.join(hosts))
        return False
