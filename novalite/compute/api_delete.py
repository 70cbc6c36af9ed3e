"""The compute API's delete: a server wherever it is, and what it holds with it.

A build request not yet taken is deleted here; one a conductor holds is marked for that
conductor to finish. A server on a host that is up is handed to that host with its
volume mappings (it detaches them, deleting the volumes marked
``delete_on_termination``). A server no host will handle (cell0, or its host down) is
deleted here, its allocation freed in Placement and its volumes let go in Cinder.

Functions of a flow module: each takes the compute API first (``compute.api.API``
makes them its methods).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects, transient
from novalite.compute import (
    api_volumes,
    consoles,
    instance_actions,
    instance_edit,
    task_states,
    vm_states,
)
from novalite.context import RequestContext
from novalite.db import engine

if TYPE_CHECKING:
    from novalite.compute.api import API

LOG = logging.getLogger(__name__)

# A local delete (no compute host takes it) tries Placement this many more times, a
# second apart and then two, before it answers 503: the client is waiting.
LOCAL_DELETE_RETRIES = 2


def delete(api: API, context: RequestContext, instance: objects.Instance) -> None:
    """Delete a server wherever it is; its allocations go with it."""
    if instance.obj_attr_is_set('locked'):
        instance_edit.check_instance_lock(context, instance)
    if not instance.obj_attr_is_set('id'):
        if _delete_while_booting(api, context, instance):
            return
        instance = api.get(context, instance.uuid)
    mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
    cell = mapping.cell_mapping
    assert cell is not None, 'a server with an id is in a cell'
    with nl_context.target_cell(context, cell) as cctxt:
        instance._context = cctxt
        service = None
        if instance.host and not cell.is_cell0:
            service = objects.Service.get_by_host_and_binary(cctxt, instance.host,
                                                             'novalite-compute')
        up = service is not None and api.servicegroup_api.service_is_up(service)
        if up and instance.vm_state == vm_states.RESIZED:
            _confirm_resize_on_deleting(api, cctxt, instance)
        bdms = objects.BlockDeviceMappingList.get_by_instance_uuid(cctxt, instance.uuid)
        if up:
            # The action, the host's terminate event (started as the delete is handed
            # to it; the host finishes it) and DELETING: one transaction.
            with engine.cell_transaction(cctxt):
                objects.InstanceAction.start_with_events(
                    cctxt, instance.uuid, instance_actions.DELETE,
                    [(instance_actions.TERMINATE_EVENT, instance.host, None)])
                instance.task_state = task_states.DELETING
                instance.save()
            mapping.queued_for_delete = True
            mapping.save()
            api.compute_rpcapi.terminate_instance(cctxt, instance, bdms=list(bdms))
            return
        objects.InstanceAction.action_start(cctxt, instance.uuid,
                                            instance_actions.DELETE, want_result=False)
        _local_delete(api, cctxt, instance, list(bdms))
        mapping.queued_for_delete = True
        mapping.save()


def _confirm_resize_on_deleting(api: API, context: RequestContext,
                                instance: objects.Instance) -> None:
    """A resized server keeps its old guest and the source's allocation (held by the
    migration) until the resize is confirmed: confirm it first, as Nova does, so that
    deleting the server leaves nothing on the source."""
    for status in ('finished', 'confirming'):
        try:
            migration = objects.Migration.get_by_instance_and_status(
                context, instance.uuid, status)
            break
        except exception.MigrationNotFoundByStatus:
            continue
    else:
        return
    LOG.info('Confirming the resize of %s before deleting it (migration %s, %s)',
             instance.uuid, migration.uuid, migration.status)
    if migration.status == 'finished':
        migration.status = 'confirming'
        migration.save()
        objects.InstanceAction.action_start(context, instance.uuid,
                                            instance_actions.CONFIRM_RESIZE,
                                            want_result=False)
        api.compute_rpcapi.confirm_resize(context, instance, migration)


def _delete_while_booting(api: API, context: RequestContext,
                          instance: objects.Instance) -> bool:
    """Delete the BuildRequest; True if that was the whole job, False if the instance
    already reached a cell.

    A build request no conductor has taken is deleted here (nothing was claimed for it;
    the conductor that takes the message finds it gone), and the volumes reserved for
    it are let go. One a conductor holds is only marked: that conductor frees the
    allocation its scheduling claimed and the volumes, and removes it, so the server
    answers 404 only once Placement holds nothing for it.
    """
    try:
        bdms = objects.BuildRequest.get_by_instance_uuid(context, instance.uuid).mappings()
    except exception.BuildRequestNotFound:
        return False
    try:
        if not objects.BuildRequest.delete_or_request(context, instance.uuid):
            LOG.info('Instance %s is being scheduled; its conductor finishes the delete',
                     instance.uuid)
            return True
    except exception.BuildRequestNotFound:
        return False
    api_volumes.unreserve(context, api.volume_api, bdms)
    try:
        mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
        mapping.queued_for_delete = True
        mapping.save()
    except exception.InstanceMappingNotFound:
        pass
    try:
        # No conductor took it, so nothing was claimed: this only tidies after a build
        # request written before conductors took them.
        api.reportclient.delete_allocation_for_instance(context, instance.uuid)
    except exception.ResourceProviderError as exc:
        LOG.warning('Could not check %s for allocations: %s', instance.uuid, exc)
    return True


def _local_delete(api: API, context: RequestContext, instance: objects.Instance,
                  bdms: list[objects.BlockDeviceMapping]) -> None:
    """Delete an instance no compute host will handle (never scheduled, or host down),
    in the API, as Nova does."""
    LOG.info('Deleting instance %s locally (host %s)', instance.uuid,
             instance.host or 'none')
    try:
        # Placement must not keep the resources of a host that will never free them, and
        # a server that answers 404 must hold none: no Placement, no delete.
        transient.call('Freeing the allocations of %s' % instance.uuid,
                       functools.partial(api.reportclient.delete_allocation_for_instance,
                                         context, instance.uuid),
                       max_retries=LOCAL_DELETE_RETRIES)
    except exception.ResourceProviderError as exc:
        LOG.warning('Placement unreachable while deleting %s: %s', instance.uuid, exc)
        raise exception.ServiceUnavailable(message=(
            'The server %s cannot be deleted now: its resources could not be freed in '
            'Placement (%s). Try again later.' % (instance.uuid,
                                                  exc.format_message()))) from exc
    _local_cleanup_volumes(api, context, bdms)
    consoles.clean_tokens(instance._context, instance.uuid)
    instance.terminated_at = timeutils.utcnow(with_timezone=True)
    instance.save()
    instance.destroy()


def _local_cleanup_volumes(api: API, context: RequestContext,
                           bdms: list[objects.BlockDeviceMapping]) -> None:
    """Let the server's volumes go in Cinder (Nova's ``_local_cleanup_bdm_volumes``):
    their attachments deleted, those marked ``delete_on_termination`` deleted."""
    for bdm in bdms:
        if not bdm.is_volume:
            continue
        api_volumes.unreserve(context, api.volume_api, [bdm])
        if bdm.delete_on_termination and bdm.volume_id:
            try:
                api.volume_api.delete(context, bdm.volume_id)
            except exception.VolumeNotFound:
                pass
            except Exception as exc:
                LOG.warning('Could not delete volume %s: %s', bdm.volume_id, exc)
