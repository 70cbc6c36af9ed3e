"""The cell that holds a server, for the conductor's tasks on servers already built."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import exception, objects

if TYPE_CHECKING:
    from novalite.context import RequestContext


def of_instance(context: RequestContext, instance_uuid: str) -> objects.CellMapping:
    """:raises InstanceMappingNotFound: no mapping, or one that names no cell yet (a
        server still being scheduled is not moved, rebuilt or unshelved)
    """
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance_uuid)
    if mapping.cell_mapping is None:
        raise exception.InstanceMappingNotFound(uuid=instance_uuid)
    return mapping.cell_mapping
