"""Shelving on this host: shelve, shelve offload, unshelve, and the periodic offload.

Shelve powers the guest off and snapshots it to the image ``<name>-shelved`` the API
created; the server is SHELVED and keeps its host and allocation. Offload destroys the
guest and its disks, frees the host and deletes the allocation in Placement: the server
is SHELVED_OFFLOADED, on no host. Unshelve spawns it again from the shelved image on
the host the conductor chose (or just powers it on where it is, if never offloaded)
and deletes that image. Called with the instance lock held.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import exception, notifications, objects
from novalite.compute import (
    block_devices,
    build,
    consoles,
    instance_actions,
    power_state,
    snapshot,
    task_states,
    vm_states,
    volume_moves,
)
from novalite.compute.operation import operation, revert
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

SHELVE_EVENT = 'compute_shelve_instance'
OFFLOAD_EVENT = 'compute_shelve_offload_instance'
UNSHELVE_EVENT = 'compute_unshelve_instance'
SHELVED_KEYS = ('shelved_at', 'shelved_image_id', 'shelved_host')
# The driver's snapshot states, as a shelve shows them.
_SHELVING_NAMES = {task_states.IMAGE_PENDING_UPLOAD: task_states.SHELVING_IMAGE_PENDING_UPLOAD,
                   task_states.IMAGE_UPLOADING: task_states.SHELVING_IMAGE_UPLOADING}


def shelve_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    image_id: str, clean_shutdown: bool = True) -> None:
    """Power off, snapshot to ``image_id``, SHELVED; offload at once when
    ``[DEFAULT] shelved_offload_time`` is 0."""
    with operation(mgr, context, instance, SHELVE_EVENT, instance.vm_state, 'shelve'):
        try:
            _power_off(mgr, instance, clean_shutdown)
        except Exception:
            snapshot.delete_image_quietly(mgr, context, image_id)
            raise
        snapshot.capture(mgr, context, instance, image_id, _SHELVING_NAMES)
        # Only once the image holds the data, as Nova: a failed shelve leaves no
        # shelved_image_id naming the image it deleted.
        instance.system_metadata = dict(
            instance.system_metadata or {},
            shelved_at=timeutils.utcnow(with_timezone=True).isoformat(),
            shelved_image_id=image_id, shelved_host=mgr.host)
        offload_now = CONF.shelved_offload_time == 0
        instance.power_state = mgr.driver.get_info(instance).state
        instance.vm_state = vm_states.SHELVED
        instance.task_state = task_states.SHELVING_OFFLOADING if offload_now else None
        instance.save(expected_task_state=[task_states.SHELVING,
                                           task_states.SHELVING_IMAGE_UPLOADING])
        LOG.info('Instance %s shelved to image %s', instance.uuid, image_id)
    if instance.vm_state == vm_states.SHELVED and \
            instance.task_state == task_states.SHELVING_OFFLOADING:
        notifications.notify_about_instance_action(context, instance, mgr.host,
                                                   'shelve_offload', notifications.START)
        try:
            offload(mgr, context, instance, clean_shutdown=False)
        except Exception as exc:
            LOG.exception('Offloading the shelved instance %s failed', instance.uuid)
            _revert_offload(mgr, context, instance, exc)
            return
        notifications.notify_about_instance_action(context, instance, mgr.host,
                                                   'shelve_offload', notifications.END)


def shelve_offload_instance(mgr: ComputeManager, context: RequestContext,
                            instance: objects.Instance, clean_shutdown: bool = True) -> None:
    """shelveOffload (or the periodic task) of a SHELVED instance, or the shelve of a
    volume-backed one (no image to make: its volumes keep its disks, as in Nova)."""
    with operation(mgr, context, instance, OFFLOAD_EVENT, instance.vm_state,
                   'shelve_offload'):
        offload(mgr, context, instance, clean_shutdown)


def offload(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
            clean_shutdown: bool) -> None:
    """Destroy the guest and its disks, leave the host, free the allocation."""
    if mgr.driver.instance_exists(instance):
        _power_off(mgr, instance, clean_shutdown)
    network_info = instance.info_cache.network_info
    bdms = volume_moves.instance_volumes(context, instance)
    mgr.driver.destroy(context, instance, network_info=network_info,
                       block_device_info=block_devices.block_device_info(bdms))
    consoles.clean_tokens(context, instance.uuid)
    # The ports and volumes stay the server's, bound to no host, until it is unshelved.
    mgr.network_api.unbind_ports(context, instance, network_info)
    volume_moves.release_host(mgr, context, instance, bdms)
    # Before the server shows SHELVED_OFFLOADED, as Nova: a client that sees it may
    # unshelve it (or boot others) at once, and must find the resources free.
    mgr.reportclient.delete_allocation_for_instance(context, instance.uuid)
    mgr.rt.free_instance(context, instance)
    instance.power_state = power_state.NOSTATE
    instance.host = None
    instance.node = None
    instance.compute_id = None
    instance.vm_state = vm_states.SHELVED_OFFLOADED
    instance.task_state = None
    instance.save(expected_task_state=[task_states.SHELVING,
                                       task_states.SHELVING_OFFLOADING])
    LOG.info('Shelved instance %s offloaded from %s', instance.uuid, mgr.host)


def _revert_offload(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    exc: BaseException) -> None:
    revert(mgr, context, instance, vm_states.SHELVED, exc)
    notifications.notify_about_instance_action(context, instance, mgr.host,
                                               'shelve_offload', notifications.ERROR,
                                               exception=exc)


def _power_off(mgr: ComputeManager, instance: objects.Instance, clean_shutdown: bool) -> None:
    try:
        state = mgr.driver.get_info(instance).state
    except exception.InstanceNotFound:
        return
    if state in (power_state.SHUTDOWN, power_state.CRASHED):
        return
    mgr.driver.power_off(instance, timeout=CONF.shutdown_timeout if clean_shutdown else 0)


def unshelve_instance(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                      image: dict | None, node: str | None = None) -> None:
    """Spawn a SHELVED_OFFLOADED instance here from its shelved image (``image``), or
    power a SHELVED one on where it is; the shelved image is deleted either way."""
    with operation(mgr, context, instance, UNSHELVE_EVENT, instance.vm_state, 'unshelve'):
        if instance.vm_state == vm_states.SHELVED:
            instance.task_state = task_states.SPAWNING
            instance.save(expected_task_state=[task_states.UNSHELVING])
            mgr.driver.power_on(context, instance)
        else:
            _spawn(mgr, context, instance, image or {}, node or mgr.host)
        image_id = (instance.system_metadata or {}).get('shelved_image_id')
        if image_id:
            snapshot.delete_image_quietly(mgr, context, image_id)
        instance.system_metadata = {k: v for k, v in (instance.system_metadata or {}).items()
                                    if k not in SHELVED_KEYS}
        instance.power_state = mgr.driver.get_info(instance).state
        instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.launched_at = timeutils.utcnow(with_timezone=True)
        instance.save(expected_task_state=[task_states.SPAWNING])
        LOG.info('Instance %s unshelved on %s', instance.uuid, mgr.host)


def _spawn(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, image: dict,
           node: str) -> None:
    """Claim here and spawn; on failure nothing stays: no guest, no claim, no
    allocation, no host (the instance goes back to SHELVED_OFFLOADED)."""
    instance.task_state = task_states.SPAWNING
    instance.save(expected_task_state=[task_states.UNSHELVING])
    try:
        mgr.rt.instance_claim(context, instance, node)
        allocations = mgr.reportclient.get_allocations_for_consumer(context, instance.uuid)
        network_info = mgr.network_api.bind_ports_to_host(
            context, instance, mgr.host, instance.info_cache.network_info)
        instance.info_cache.network_info = network_info
        image_meta = objects.ImageMeta.from_dict(image) if image else None
        bdi = volume_moves.connect_here(mgr, context, instance)
        mgr.driver.spawn(context, instance, image_meta, [], None, allocations,
                         network_info=network_info, block_device_info=bdi)
    except Exception:
        _undo_spawn(mgr, context, instance, node)
        raise


def _undo_spawn(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                node: str) -> None:
    # The server goes back to SHELVED_OFFLOADED with its ports: the next unshelve binds
    # them again.
    build.cleanup(mgr, context, instance, node, keep_ports=True)
    try:
        # The volumes stay the server's too, reserved for the next unshelve.
        volume_moves.release_host(mgr, context, instance)
    except Exception as exc:
        LOG.warning('Could not release the volumes of %s from %s: %s', instance.uuid,
                    mgr.host, exc)
    instance.host = None
    instance.node = None
    instance.compute_id = None


def offload_expired(mgr: ComputeManager, context: RequestContext) -> None:
    """The periodic task: offload this host's SHELVED instances shelved longer than
    ``[DEFAULT] shelved_offload_time`` seconds (never when it is negative)."""
    if CONF.shelved_offload_time <= 0:
        return
    now = timeutils.utcnow(with_timezone=True)
    for instance in objects.InstanceList.get_by_host(context, mgr.host):
        if instance.vm_state != vm_states.SHELVED or instance.task_state is not None:
            continue
        shelved_at = (instance.system_metadata or {}).get('shelved_at')
        if not shelved_at:
            continue
        age = (now - timeutils.parse_isotime(shelved_at)).total_seconds()
        if age < CONF.shelved_offload_time:
            continue
        lock = mgr.instance_lock(instance.uuid)
        if not lock.acquire(blocking=False):
            continue  # something is being done to it; the next run looks again
        try:
            instance.task_state = task_states.SHELVING_OFFLOADING
            try:
                instance.save(expected_task_state=[None])
            except exception.UnexpectedTaskStateError:
                continue
            objects.InstanceAction.action_start(context, instance.uuid,
                                                instance_actions.SHELVE_OFFLOAD,
                                                want_result=False)
            shelve_offload_instance(mgr, context, instance, clean_shutdown=False)
        finally:
            lock.release()
