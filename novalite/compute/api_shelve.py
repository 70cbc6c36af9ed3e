"""The compute API's shelving: shelve, shelveOffload and unshelve.

Shelve snapshots the server into the image ``<name>-shelved`` (created here, queued)
and casts to its host; shelveOffload (admin) casts to the host of a SHELVED server;
unshelve goes to the conductor, which powers a SHELVED server on where it is, or
schedules a SHELVED_OFFLOADED one (2.77: into another zone; 2.91: onto a host).

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import instance_actions, instance_edit, task_states, vm_states
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

SHELVE_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.PAUSED,
                    vm_states.SUSPENDED)
UNSHELVE_VM_STATES = (vm_states.SHELVED, vm_states.SHELVED_OFFLOADED)
_UNSET = object()


class UnshelveInvalidState(exception.InstanceInvalidState):
    msg_fmt = ('Specifying an availability zone or a host when unshelving server '
               '%(instance_uuid)s with status %(state)s is not supported. The server '
               'status must be SHELVED_OFFLOADED.')


def shelve(api: API, context: RequestContext, instance: objects.Instance,
           clean_shutdown: bool = True) -> None:
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'shelve', SHELVE_VM_STATES)
    if not instance.image_ref:
        # Volume-backed: no image, offloaded at once (Nova's shelve of such a server).
        api.cast_power(context, instance, instance_actions.SHELVE, task_states.SHELVING,
                       lambda cctxt: api.compute_rpcapi.shelve_offload_instance(
                           cctxt, instance, clean_shutdown=clean_shutdown))
        return
    with api.host_context(context, instance) as cctxt:
        image = api.create_image_record(cctxt, instance,
                                         '%s-shelved' % instance.display_name,
                                         'snapshot')
        try:
            instance.task_state = task_states.SHELVING
            instance.save(expected_task_state=[None])
        except (exception.InstanceInvalidState, exception.InstanceNotFound):
            api.delete_image_quietly(cctxt, image['id'])
            raise
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.SHELVE, want_result=False)
        api.compute_rpcapi.shelve_instance(cctxt, instance, image['id'],
                                            clean_shutdown=clean_shutdown)


def shelve_offload(api: API, context: RequestContext, instance: objects.Instance,
                   clean_shutdown: bool = True) -> None:
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'shelve_offload', (vm_states.SHELVED,))
    api.cast_power(context, instance, instance_actions.SHELVE_OFFLOAD,
                     task_states.SHELVING_OFFLOADING,
                     lambda cctxt: api.compute_rpcapi.shelve_offload_instance(
                         cctxt, instance, clean_shutdown=clean_shutdown))


def unshelve(api: API, context: RequestContext, instance: objects.Instance, new_az: Any = _UNSET,
             host: str | None = None) -> None:
    """:param new_az: the zone to unshelve into (2.77), None to unpin (2.91)
    :param host: the host to unshelve onto (2.91, admins)
    :raises UnshelveInvalidState: (409) a zone or host for a server that is not
        offloaded
    """
    instance_edit.check_instance_lock(context, instance)
    instance_edit.check_instance_state(instance, 'unshelve', UNSHELVE_VM_STATES)
    if (new_az is not _UNSET or host) and \
            instance.vm_state != vm_states.SHELVED_OFFLOADED:
        raise UnshelveInvalidState(instance_uuid=instance.uuid,
                                   state=str(instance.vm_state).upper())
    spec = objects.RequestSpec.get_by_instance_uuid(context, instance.uuid)
    if new_az is not _UNSET:
        spec.availability_zone = new_az
        instance.availability_zone = new_az
        spec.save()
    # A requested host is for this unshelve only: the spec keeps no forced host.
    spec.force_hosts = [host] if host else []
    spec.force_nodes = []
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
    assert mapping.cell_mapping is not None, 'a server with an id is in a cell'
    with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
        instance._context = cctxt
        instance.task_state = task_states.UNSHELVING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.UNSHELVE,
                                            want_result=False)
        api.compute_task_api.unshelve_instance(cctxt, instance, spec)
