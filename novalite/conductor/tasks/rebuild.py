"""Rebuilding a server in the conductor: check a new image against the server's host.

A rebuild stays on its host, so nothing is scheduled or claimed. But a new image may
ask for what the host cannot run (another architecture, hypervisor type or version):
Nova runs the scheduler's filters on the current host only; here, as they are the
filters that look at the image, ``ImagePropertiesFilter`` is run on the host's
HostState when it is enabled. A refused image puts the server in ERROR with a "No
valid host" fault and gives it back its image, as Nova does. A volume-backed server
keeps no image of its own (its image is its root volume's), so there is none to give
back; ``reimage_boot_volume`` goes along to the host.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.conductor.tasks import build, cell
from novalite.conf import CONF
from novalite.scheduler import host_manager
from novalite.scheduler.filters import image_properties_filter

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

REBUILD_EVENT = 'conductor_rebuild_server'


def rebuild_instance(deps: build.Dependencies, context: RequestContext, instance: objects.Instance,
                     image: dict, orig_image_ref: str, orig_sys_metadata: dict,
                     admin_password: str | None, injected_files: list,
                     preserve_ephemeral: bool, reimage_boot_volume: bool = False) -> None:
    cell_mapping = cell.of_instance(context, instance.uuid)
    with nl_context.target_cell(context, cell_mapping) as cctxt:
        instance._context = cctxt
        objects.InstanceActionEvent.event_start(cctxt, instance.uuid, REBUILD_EVENT,
                                                host=CONF.host)
        try:
            if image.get('id') != orig_image_ref:
                check_image_on_host(cctxt, instance, image, cell_mapping.uuid)
        except exception.NoValidHost as exc:
            LOG.warning('Rebuild of %s refused: %s', instance.uuid, exc.format_message())
            if instance.image_ref:
                instance.image_ref = orig_image_ref
            instance.system_metadata = orig_sys_metadata
            build.set_error(cctxt, instance, exc, REBUILD_EVENT, host=CONF.host)
            return
        objects.InstanceActionEvent.event_finish(cctxt, instance.uuid, REBUILD_EVENT,
                                                 host=CONF.host)
        deps.compute_rpcapi.rebuild_instance(
            cctxt, instance, image=image, admin_password=admin_password,
            injected_files=injected_files, preserve_ephemeral=preserve_ephemeral,
            reimage_boot_volume=reimage_boot_volume)


def check_image_on_host(context: RequestContext, instance: objects.Instance, image: dict,
                        cell_uuid: str) -> None:
    """:raises NoValidHost: the server's host cannot run ``image``"""
    if 'ImagePropertiesFilter' not in CONF.filter_scheduler.enabled_filters:
        return
    if instance.host is None or instance.node is None:
        raise exception.ComputeHostNotFound(host=instance.host)
    node = objects.ComputeNode.get_by_host_and_nodename(context, instance.host,
                                                        instance.node)
    state = host_manager.HostState(instance.host, instance.node, cell_uuid)
    state.update_from_compute_node(node)
    spec = objects.RequestSpec(context, image=objects.ImageMeta.from_dict(image))
    if not image_properties_filter.ImagePropertiesFilter().host_passes(state, spec):
        raise exception.NoValidHost(
            reason='Image %s is not supported by the host %s of the server (%s); '
                   'filter ImagePropertiesFilter' % (image.get('id'), instance.host,
                                                     state.supported_instances))
