"""Selection: one host the scheduler chose (or an alternate), with its claim."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_serialization import jsonutils
from oslo_versionedobjects import fields

from novalite.objects import base

if TYPE_CHECKING:
    from novalite.scheduler.host_manager import HostState


@base.NovaliteObjectRegistry.register
class Selection(base.NovaliteObject):
    VERSION = '1.0'
    compute_node_uuid: str
    service_host: str
    nodename: str
    cell_uuid: str
    allocation_request: str | None
    allocation_request_version: str | None
    availability_zone: str | None

    fields: dict[str, fields.Field[Any]] = {
        'compute_node_uuid': fields.UUIDField(),
        'service_host': fields.StringField(),
        'nodename': fields.StringField(),
        'cell_uuid': fields.UUIDField(),
        # The Placement allocation request (JSON) claimed, or to claim, for this host.
        'allocation_request': fields.StringField(nullable=True),
        'allocation_request_version': fields.StringField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),
    }

    @classmethod
    def from_host_state(cls, host_state: HostState, allocation_request: dict | None = None,
                        allocation_request_version: str | None = None) -> Selection:
        return cls(compute_node_uuid=host_state.uuid, service_host=host_state.host,
                   nodename=host_state.nodename, cell_uuid=host_state.cell_uuid,
                   allocation_request=(jsonutils.dumps(allocation_request)
                                       if allocation_request else None),
                   allocation_request_version=allocation_request_version,
                   availability_zone=host_state.availability_zone)
