"""Events other services report about this host's instances (os-server-external-events).

- ``power-update`` (a bare-metal node changed power on its own): the guest's power
  state is read again and the instance synced with it.
- ``network-changed`` (Neutron changed a port: an address, a binding, a floating IP):
  the instance's network info cache is refreshed from Neutron. Not while the instance
  is being built or moved: the flow that changes the ports writes the cache itself
  (Neutron sends this event for the binding the build itself made).
- ``network-vif-deleted`` (a port of the server was deleted in Neutron): its VIF leaves
  the cache.
- ``network-vif-plugged``/``-unplugged`` that nothing waits for (the second of
  Neutron's two, or one for a server not being built): nothing to do.
- ``volume-reimaged`` (Cinder wrote the image onto a root volume, tag: the volume) is
  awaited by the rebuild that asked for it (``compute/rebuild_volume.py``); one that
  comes after that rebuild gave up waiting is dropped.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.compute import power_sync, task_states, vm_states
from novalite.network import model
from novalite.objects.instance_info_cache import InstanceInfoCache

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def needs_work(instance: objects.Instance, event: dict) -> bool:
    """Whether an event (no waiter took it) needs a handler under the instance lock."""
    if event['name'] == 'network-changed':
        return instance.vm_state != vm_states.BUILDING and instance.task_state is None
    if event['name'] == 'network-vif-deleted':
        # The server's own delete deletes its ports: nothing to detach.
        return instance.task_state != task_states.DELETING
    if event['name'] == 'power-update':
        return True
    LOG.debug('Event %s:%s (%s) for instance %s: nothing waits for it', event['name'],
              event.get('tag'), event.get('status'), instance.uuid)
    return False


def handle_event(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                 event: dict) -> None:
    """Act on one event of ``instance`` (called with the instance lock held)."""
    name = event['name']
    if name == 'power-update':
        power_sync.handle_lifecycle_event(mgr, context, instance.uuid,
                                          'power-update %s' % event.get('tag'))
        return
    if name in ('network-changed', 'network-vif-deleted'):
        # The instance was read when the event arrived, before this lock was had: a
        # flow that held it (an interface attach or detach) may have changed the cache.
        instance.info_cache = InstanceInfoCache.get_by_instance_uuid(context, instance.uuid)
        instance.obj_reset_changes(['info_cache'])
    if name == 'network-changed':
        _refresh_network_info(mgr, context, instance)
        return
    if name == 'network-vif-deleted':
        _forget_vif(mgr, context, instance, event.get('tag'))
        return
    LOG.info('Received event %s:%s (%s) for instance %s', name, event.get('tag'),
             event.get('status'), instance.uuid)


def _refresh_network_info(mgr: ComputeManager, context: RequestContext,
                          instance: objects.Instance) -> None:
    current = instance.info_cache.network_info
    fresh = mgr.network_api.get_instance_nw_info(context, instance, current)
    if fresh != current:
        instance.info_cache.network_info = fresh
        instance.info_cache.save()
        LOG.info('Network info of %s refreshed (%d ports)', instance.uuid, len(fresh))


def _forget_vif(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                port_id: str | None) -> None:
    current = instance.info_cache.network_info
    vif = model.find(current, port_id) if port_id else None
    if vif is None:
        return
    try:
        mgr.driver.detach_interface(context, instance, vif.copy())
    except NotImplementedError:
        pass
    except Exception as exc:
        LOG.warning('Could not detach the VIF of deleted port %s from %s: %s', port_id,
                    instance.uuid, exc)
    instance.info_cache.network_info = [v for v in current if v['id'] != port_id]
    instance.info_cache.save()
    LOG.info('Port %s of %s was deleted in Neutron', port_id, instance.uuid)
