"""Unshelving a server in the conductor.

A SHELVED server still has its host: the host powers it on. A SHELVED_OFFLOADED one
is scheduled like a new boot (``select_destinations`` with the server's RequestSpec,
which claims its resources in Placement) and sent to the chosen host with its shelved
image. When no host fits, the server stays SHELVED_OFFLOADED with no task, as in Nova;
any other failure frees what was claimed. The events are Nova's: ``get_image_info``
and ``schedule_instances``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import task_states, vm_states
from novalite.conductor.tasks import build, cell
from novalite.conf import CONF
from novalite.image import glance

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

IMAGE_EVENT = 'get_image_info'
SCHEDULE_EVENT = 'schedule_instances'


def unshelve_instance(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
                      request_spec: objects.RequestSpec) -> None:
    with nl_context.target_cell(context, cell.of_instance(context, instance.uuid)) as cctxt:
        instance._context = cctxt
        if instance.vm_state == vm_states.SHELVED:
            assert instance.host is not None, 'a shelved server not offloaded keeps its host'
            deps.compute_rpcapi.unshelve_instance(cctxt, instance, instance.host)
            return
        # A volume-backed server has no shelved image: its volumes hold its disks.
        image = _shelved_image(cctxt, instance) if instance.image_ref else {}
        if image is None:
            return
        _schedule_and_unshelve(deps, cctxt, instance, request_spec, image)


def _shelved_image(context: RequestContext, instance: objects.Instance) -> dict | None:
    """The shelved image; None (the server back to no task) when it is gone."""
    image_id = (instance.system_metadata or {}).get('shelved_image_id')
    objects.InstanceActionEvent.event_start(context, instance.uuid, IMAGE_EVENT,
                                            host=CONF.host)
    try:
        if not image_id:
            raise exception.ImageNotFound(image_id='(none recorded)')
        image = glance.API().get(context, image_id)
    except Exception as exc:
        LOG.error('Cannot unshelve %s: its shelved image %s: %s', instance.uuid, image_id,
                  exc)
        _finish_with_error(context, instance, IMAGE_EVENT, exc)
        return None
    objects.InstanceActionEvent.event_finish(context, instance.uuid, IMAGE_EVENT,
                                             host=CONF.host)
    return image


def _schedule_and_unshelve(deps: build.Dependencies, context: RequestContext,
                           instance: objects.Instance, request_spec: objects.RequestSpec,
                           image: dict) -> None:
    objects.InstanceActionEvent.event_start(context, instance.uuid, SCHEDULE_EVENT,
                                            host=CONF.host)
    if image:
        request_spec.image = objects.ImageMeta.from_dict(image)
    request_spec.ignore_hosts = []
    try:
        host_lists = deps.query_client.select_destinations(
            context, request_spec, [instance.uuid], return_objects=True,
            return_alternates=False)
    except exception.NoValidHost as exc:
        LOG.warning('No valid host found to unshelve %s: %s', instance.uuid,
                    exc.format_message())
        _finish_with_error(context, instance, SCHEDULE_EVENT, exc)
        return
    except Exception as exc:
        LOG.exception('Scheduling the unshelve of %s failed', instance.uuid)
        _finish_with_error(context, instance, SCHEDULE_EVENT, build._scheduling_error(exc))
        return
    selection = host_lists[0][0]
    try:
        if selection.availability_zone:
            # The server is now in the zone of its new host, as Nova records it.
            instance.availability_zone = selection.availability_zone
            instance.save()
        objects.InstanceActionEvent.event_finish(context, instance.uuid, SCHEDULE_EVENT,
                                                 host=CONF.host)
        deps.compute_rpcapi.unshelve_instance(context, instance, selection.service_host,
                                              image=image, node=selection.nodename)
    except Exception as exc:
        LOG.exception('Could not hand the unshelve of %s to %s', instance.uuid,
                      selection.service_host)
        build.free_allocations(deps, context, [instance.uuid])
        _finish_with_error(context, instance, SCHEDULE_EVENT, exc)


def _finish_with_error(context: RequestContext, instance: objects.Instance, event: str,
                       exc: BaseException) -> None:
    """The event failed; the server stays where it was, with no task."""
    message, trace = objects.InstanceActionEvent.format_error(exc)
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, exc_val=message,
                                             exc_tb=trace, host=CONF.host)
    instance.task_state = None
    try:
        instance.save(expected_task_state=[task_states.UNSHELVING])
    except exception.InstanceNotFound:
        pass
