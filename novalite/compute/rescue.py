"""Rescuing and unrescuing an instance on this host.

Called by the compute manager with the instance lock held. As in Nova, a rescue or
unrescue that fails leaves the instance in ERROR (with a fault): its guest may be
half-way between its two definitions, and a hard reboot is the way back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, objects
from novalite.compute import task_states, vm_states
from novalite.compute.operation import finish, operation
from novalite.conf import CONF
from novalite.image import glance

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def rescue_image_meta(context: RequestContext, instance: objects.Instance,
                      rescue_image_ref: str | None) -> objects.ImageMeta:
    """The image the rescue boots: the one asked for, else the image the server was
    built from (``image_base_image_ref``), else its current image, as Nova chooses."""
    ref = rescue_image_ref or (instance.system_metadata or {}).get('image_base_image_ref') \
        or instance.image_ref
    if not ref:
        raise exception.InstanceNotRescuable(instance_id=instance.uuid,
                                             reason='it has no image to rescue with')
    return objects.ImageMeta.from_dict(glance.API().get(context, ref))


def rescue_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    rescue_password: str | None, rescue_image_ref: str | None,
                    clean_shutdown: bool = True) -> None:
    """Power the guest off, then boot the rescue image with its disk attached."""
    with operation(mgr, context, instance, 'compute_rescue_instance', vm_states.ERROR,
                   'rescue'):
        image_meta = rescue_image_meta(context, instance, rescue_image_ref)
        timeout = CONF.shutdown_timeout if clean_shutdown else 0
        mgr.driver.power_off(instance, timeout=timeout)
        try:
            mgr.driver.rescue(context, instance, None, image_meta, rescue_password)
        except Exception as exc:
            raise exception.InstanceNotRescuable(
                instance_id=instance.uuid, reason='Driver Error: %s' % exc) from exc
        instance.launched_at = timeutils.utcnow(with_timezone=True)
        finish(mgr, instance, vm_states.RESCUED, task_states.RESCUING)
        LOG.info('Instance %s rescued with image %s', instance.uuid, image_meta.id)


def unrescue_instance(mgr: ComputeManager, context: RequestContext,
                      instance: objects.Instance) -> None:
    """Boot the instance from its own disk again."""
    with operation(mgr, context, instance, 'compute_unrescue_instance', vm_states.ERROR,
                   'unrescue'):
        mgr.driver.unrescue(context, instance)
        finish(mgr, instance, vm_states.ACTIVE, task_states.UNRESCUING)
        LOG.info('Instance %s unrescued', instance.uuid)
