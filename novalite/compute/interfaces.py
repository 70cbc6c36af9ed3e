"""A server's network interfaces attached and detached on its host, and its fixed IPs.

Called by the compute manager with the instance lock held. No task state is set (as in
Nova), so none can be left behind. Each operation records its instance-action event
(``compute_<method>``) and sends ``instance.<action>.start/end/error``; a failure marks
the event Error, records an instance fault, and leaves the ports as they were:

- attach: the port is created (or the user's taken) bound to this host, as a build's
  are, then the driver adds the NIC; when the driver cannot, the port is released
  again (deleted, or the user's unbound). The VIF joins the info cache and is returned
  (the API's call waits for it), so attach's errors reach the caller;
- detach: the driver removes the NIC, then the port is released (deleted if novalite
  made it, unbound and kept if the user passed it in), then the VIF leaves the cache.
  A detach that failed half-way can be asked again: a NIC already gone is no error;
- addFixedIp: one more address on the server's port on that network (Nova's); when
  the server has no port there, a new interface on that network;
- removeFixedIp: the address comes off its port; when it was the port's only one, the
  interface is detached.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from oslo_log import log as logging

from novalite import exception, notifications, objects
from novalite.network import client as neutron_client
from novalite.network import model
from novalite.network.requests import NetworkRequest
from novalite.objects import instance_fault

if TYPE_CHECKING:
    from novalite.context import RequestContext
    from novalite.network.api import NetworkAPI
    from novalite.objects.instance import Instance
    from novalite.virt.driver import ComputeDriver

LOG = logging.getLogger(__name__)

ATTACH_EVENT = 'compute_attach_interface'
DETACH_EVENT = 'compute_detach_interface'
ADD_FIXED_IP_EVENT = 'compute_add_fixed_ip_to_instance'
REMOVE_FIXED_IP_EVENT = 'compute_remove_fixed_ip_from_instance'

# What an attach may fail with that the caller can act on: passed on as they are.
_CALLER_ERRORS = (exception.Invalid, exception.NotFound, exception.Conflict,
                  exception.Forbidden, exception.QuotaError,
                  exception.NeutronConnectionFailed)


class InterfaceManager(Protocol):
    """What these flows need of the compute manager."""

    host: str
    driver: ComputeDriver
    network_api: NetworkAPI


class RecordingManager(Protocol):
    host: str


@contextlib.contextmanager
def recorded(mgr: RecordingManager, context: RequestContext, instance: Instance,
             event: str, action: str, reraise: bool) -> Iterator[None]:
    """The instance-action event and notifications around one operation; on failure
    the event's error and a fault, then the error raised again (``reraise``: a call's
    caller waits for it) or logged (a cast's is gone)."""
    objects.InstanceActionEvent.event_start(context, instance.uuid, event, host=mgr.host)
    notifications.notify_about_instance_action(context, instance, mgr.host, action,
                                               notifications.START)
    try:
        yield
    except Exception as exc:
        message, trace = objects.InstanceActionEvent.format_error(exc)
        try:
            objects.InstanceActionEvent.event_finish(context, instance.uuid, event,
                                                     exc_val=message, exc_tb=trace,
                                                     host=mgr.host)
            instance_fault.add_instance_fault_from_exc(context, instance, exc,
                                                       host=mgr.host)
        except Exception:
            LOG.exception('Could not record the failure of %s of %s', event,
                          instance.uuid)
        notifications.notify_about_instance_action(
            context, instance, mgr.host, action, notifications.ERROR, exception=exc)
        if reraise:
            raise
        LOG.warning('%s of instance %s failed: %s', event, instance.uuid, message)
        return
    objects.InstanceActionEvent.event_finish(context, instance.uuid, event, host=mgr.host)
    notifications.notify_about_instance_action(context, instance, mgr.host, action,
                                               notifications.END)


def _save_network_info(instance: Instance, network_info: model.NetworkInfo) -> None:
    instance.info_cache.network_info = network_info
    instance.info_cache.save()


def _check_driver(mgr: InterfaceManager, instance: Instance, tag: str | None = None) -> None:
    capabilities = mgr.driver.capabilities
    if not capabilities.get('supports_attach_interface'):
        raise exception.AttachInterfaceNotSupported(instance_uuid=instance.uuid)
    if tag and not capabilities.get('supports_tagged_attach_interface'):
        raise exception.NetworkInterfaceTaggedAttachNotSupported()


def _allocation_error(instance: Instance, request: NetworkRequest,
                      exc: Exception) -> Exception:
    """What an allocation's failure means to the caller (Neutron's own errors do not
    cross RPC)."""
    if isinstance(exc, _CALLER_ERRORS):
        return exc
    if isinstance(exc, neutron_client.NeutronNotFound):
        if request.get('port_id'):
            return exception.PortNotFound(port_id=request['port_id'])
        return exception.NetworkNotFound(network_id=request.get('network_id'))
    if isinstance(exc, neutron_client.NeutronConflict) and request.get('fixed_ip'):
        return exception.FixedIpAlreadyInUse(address=request['fixed_ip'],
                                             instance_uuid=instance.uuid)
    LOG.warning('Could not allocate a port for %s: %s', instance.uuid, exc)
    return exception.InterfaceAttachFailed(instance_uuid=instance.uuid)


def _attach(mgr: InterfaceManager, context: RequestContext, instance: Instance,
            request: NetworkRequest) -> model.VIF:
    _check_driver(mgr, instance, request.get('tag'))
    try:
        vif = mgr.network_api.allocate_for_instance(context, instance, [request],
                                                    mgr.host)[0]
    except Exception as exc:
        # allocate_for_instance released what it had done.
        error = _allocation_error(instance, request, exc)
        if error is exc:
            raise
        raise error from exc
    try:
        mgr.driver.attach_interface(context, instance, None, vif)
    except Exception as exc:
        LOG.warning('Could not attach port %s to %s: %s', vif['id'], instance.uuid, exc)
        _release(mgr, context, instance, vif)
        raise exception.InterfaceAttachFailed(instance_uuid=instance.uuid) from exc
    try:
        _save_network_info(instance, [*instance.info_cache.network_info, vif])
    except Exception:
        # Not in the cache, not on the server: nothing may hold the port.
        _undo_attach(mgr, context, instance, vif)
        raise
    LOG.info('Port %s attached to %s', vif['id'], instance.uuid)
    return vif


def _release(mgr: InterfaceManager, context: RequestContext, instance: Instance,
             vif: model.VIF) -> None:
    try:
        mgr.network_api.deallocate_port_for_instance(context, instance, vif)
    except Exception:
        # The port still names the server: its delete (or the port audit) releases it.
        LOG.exception('Could not release port %s of %s', vif['id'], instance.uuid)


def _undo_attach(mgr: InterfaceManager, context: RequestContext, instance: Instance,
                 vif: model.VIF) -> None:
    try:
        mgr.driver.detach_interface(context, instance, vif)
    except Exception:
        LOG.exception('Could not take port %s off %s again', vif['id'], instance.uuid)
    _release(mgr, context, instance, vif)


def _detach(mgr: InterfaceManager, context: RequestContext, instance: Instance,
            vif: model.VIF) -> None:
    _check_driver(mgr, instance)
    try:
        mgr.driver.detach_interface(context, instance, vif)
    except exception.InstanceNotFound:
        LOG.info('Instance %s has no guest here: no NIC of port %s to remove',
                 instance.uuid, vif['id'])
    except exception.NovaliteException as exc:
        LOG.warning('Could not detach port %s from %s: %s', vif['id'], instance.uuid, exc)
        raise exception.InterfaceDetachFailed(instance_uuid=instance.uuid) from exc
    mgr.network_api.deallocate_port_for_instance(context, instance, vif)
    _save_network_info(instance, [v for v in instance.info_cache.network_info
                                  if v['id'] != vif['id']])
    LOG.info('Port %s detached from %s', vif['id'], instance.uuid)


# -- the operations ---------------------------------------------------------------------

def attach_interface(mgr: InterfaceManager, context: RequestContext, instance: Instance,
                     network_id: str | None, port_id: str | None,
                     requested_ip: str | None, tag: str | None = None) -> model.VIF:
    """Add a NIC on a new port of ``network_id``, or on the user's ``port_id``.

    :returns: the VIF as cached.
    :raises AttachInterfaceNotSupported, NetworkInterfaceTaggedAttachNotSupported,
        PortNotFound, NetworkNotFound, PortInUse, FixedIpAlreadyInUse,
        NeutronConnectionFailed, InterfaceAttachFailed:
    """
    request = NetworkRequest(network_id=network_id, port_id=port_id,
                             fixed_ip=requested_ip, tag=tag)
    with recorded(mgr, context, instance, ATTACH_EVENT, 'interface_attach', reraise=True):
        vif = _attach(mgr, context, instance, request)
    return vif


def detach_interface(mgr: InterfaceManager, context: RequestContext, instance: Instance,
                     port_id: str) -> None:
    """Remove the NIC of ``port_id`` and release the port."""
    with recorded(mgr, context, instance, DETACH_EVENT, 'interface_detach', reraise=False):
        vif = model.find(instance.info_cache.network_info, port_id)
        if vif is None:
            raise exception.PortNotFound(message='Port %s is not attached' % port_id)
        _detach(mgr, context, instance, vif)


def add_fixed_ip(mgr: InterfaceManager, context: RequestContext, instance: Instance,
                 network_id: str) -> None:
    """Another address on ``network_id`` for the server (a new interface when it has
    no port there)."""
    with recorded(mgr, context, instance, ADD_FIXED_IP_EVENT, 'add_fixed_ip',
                   reraise=False):
        current = instance.info_cache.network_info
        if any(v.get('network', {}).get('id') == network_id for v in current):
            _save_network_info(instance, mgr.network_api.add_fixed_ip_to_instance(
                context, instance, network_id, current))
        else:
            _attach(mgr, context, instance, NetworkRequest(network_id=network_id))


def remove_fixed_ip(mgr: InterfaceManager, context: RequestContext, instance: Instance,
                    address: str) -> None:
    """Take ``address`` off the server (its interface with it, if it was its only one)."""
    with recorded(mgr, context, instance, REMOVE_FIXED_IP_EVENT, 'remove_fixed_ip',
                   reraise=False):
        current = instance.info_cache.network_info
        holder = next((v for v in current
                       if address in [ip['address'] for ip in model.fixed_ips(v)]), None)
        if holder is not None and len(model.fixed_ips(holder)) == 1:
            _detach(mgr, context, instance, holder)
        else:
            _save_network_info(instance, mgr.network_api.remove_fixed_ip_from_instance(
                context, instance, address, current))
