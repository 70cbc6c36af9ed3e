"""Helpers of the compute API's edits of a server: state checks, quotas, cell lookups."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite import servicegroup
    from novalite.context import RequestContext

T = TypeVar('T')
D = TypeVar('D')

# Metadata changes need a settled server, as Nova's check_instance_state decides.
METADATA_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.SUSPENDED,
                   vm_states.STOPPED)
# Tags can only change on a server that is in a cell; building ones are refused (409).
TAG_STATES = METADATA_STATES

HOST_STATUS_UP = 'UP'
HOST_STATUS_DOWN = 'DOWN'
HOST_STATUS_MAINTENANCE = 'MAINTENANCE'
HOST_STATUS_UNKNOWN = 'UNKNOWN'
HOST_STATUS_NONE = ''


def check_state(instance: objects.Instance, vm_states_allowed: tuple[str, ...], method: str,
                task_state_must_be_none: bool = False) -> None:
    """:raises InstanceInvalidState: (409) the server is not in an allowed state"""
    if instance.vm_state not in vm_states_allowed:
        raise exception.InstanceInvalidState(attr='vm_state', instance_uuid=instance.uuid,
                                             state=instance.vm_state, method=method)
    if task_state_must_be_none and instance.task_state is not None:
        raise exception.InstanceInvalidState(attr='task_state', instance_uuid=instance.uuid,
                                             state=instance.task_state, method=method)


def check_instance_state(instance: objects.Instance, method: str, vm_state: tuple[str, ...],
                         task_state: tuple[str | None, ...] = (None,)) -> None:
    """Nova's ``check_instance_state``: ``method`` needs the server in one of
    ``vm_state`` and doing one of ``task_state`` (None: nothing).

    :raises InstanceInvalidState: (409) it is not
    """
    if instance.vm_state not in vm_state:
        raise exception.InstanceInvalidState(attr='vm_state', instance_uuid=instance.uuid,
                                             state=instance.vm_state, method=method)
    if instance.task_state not in task_state:
        raise exception.InstanceInvalidState(attr='task_state', instance_uuid=instance.uuid,
                                             state=instance.task_state, method=method)


def check_instance_lock(context: RequestContext, instance: objects.Instance) -> None:
    """Nova's ``check_instance_lock``: only an admin acts on a locked server.

    :raises InstanceIsLocked: (409) it is locked and the caller is not an admin
    """
    if instance.locked and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=instance.uuid)


def check_metadata_quota(metadata: dict) -> None:
    """:raises MetadataLimitExceeded: (403) more items than ``[quota] metadata_items``"""
    limit = CONF.quota.metadata_items
    if 0 <= limit < len(metadata):
        raise exception.MetadataLimitExceeded(allowed=limit)


def in_cell(context: RequestContext, instance_uuid: str, default: D,
            fn: Callable[[RequestContext], T]) -> T | D:
    """``fn(cell_context)`` in the server's cell, or ``default`` when it has none yet."""
    try:
        mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance_uuid)
    except exception.InstanceMappingNotFound as exc:
        raise exception.InstanceNotFound(instance_id=instance_uuid) from exc
    if mapping.cell_mapping is None:
        return default
    with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
        return fn(cctxt)


def host_statuses(instances: list[objects.Instance],
                  servicegroup_api: servicegroup.API) -> dict[str, str]:
    """The status of each server's host, looked up once per host (Nova's rules: forced
    down is DOWN, disabled is MAINTENANCE, a missed heartbeat is UNKNOWN)."""
    by_host: dict[str, str] = {}
    result = {}
    for instance in instances:
        host = instance.host if instance.obj_attr_is_set('host') else None
        if not host:
            result[instance.uuid] = HOST_STATUS_NONE
            continue
        if host not in by_host:
            by_host[host] = _host_status(instance._context, host, servicegroup_api)
        result[instance.uuid] = by_host[host]
    return result


def _host_status(context: RequestContext, host: str,
                 servicegroup_api: servicegroup.API) -> str:
    from novalite.compute import lookups
    service = lookups.compute_service(context, host)
    if service is None:
        return HOST_STATUS_NONE
    if service.forced_down:
        return HOST_STATUS_DOWN
    if service.disabled:
        return HOST_STATUS_MAINTENANCE
    return HOST_STATUS_UP if servicegroup_api.service_is_up(service) else HOST_STATUS_UNKNOWN
