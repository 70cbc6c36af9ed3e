"""ServerGroupAntiAffinityFilter: members of an anti-affinity group on distinct hosts."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

POLICY = 'anti-affinity'


class ServerGroupAntiAffinityFilter(filters.BaseHostFilter):
    """For a group with the ``anti-affinity`` policy: a host passes while it runs fewer
    members than the ``max_server_per_host`` rule allows (1 by default).

    A host already running the instance being scheduled passes, so that a move may
    land back on its source.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        group = filters.instance_group(spec_obj)
        if group is None or group.policy != POLICY:
            return True
        instance_uuid = spec_obj.instance_uuid if spec_obj.obj_attr_is_set(
            'instance_uuid') else None
        if instance_uuid and instance_uuid in host_state.instances:
            return True
        members_here = host_state.instances & set(group.members)
        limit = (group.rules or {}).get('max_server_per_host', 1)
        if len(members_here) < limit:
            return True
        LOG.debug('%s already runs %d member(s) of anti-affinity group %s (limit %d)',
                  host_state, len(members_here), group.uuid, limit)
        return False
