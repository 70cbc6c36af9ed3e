"""Compute API of a server's network interfaces (os-interface) and fixed IPs
(addFixedIp/removeFixedIp): the checks Nova makes before anything is done, then the
server's host does the work (``compute/interfaces.py``).

The state and lock checks are Nova's ``check_instance_state`` / ``check_instance_lock``
of the same methods; the request of an attach is checked against Neutron as a create's
networks are (``network.requests.resolve_attach``), with the caller's own token.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol, cast

from novalite import exception, objects
from novalite.compute import instance_actions, instance_edit, vm_states
from novalite.network import client as neutron_client
from novalite.network import model
from novalite.network import requests as net_requests

if TYPE_CHECKING:
    from novalite.compute.rpcapi import ComputeAPI as ComputeRPCAPI
    from novalite.context import RequestContext
    from novalite.objects.instance import Instance

# Nova's: interfaces change on a server that is settled and on a host.
INTERFACE_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.STOPPED)


class ComputeAPILike(Protocol):
    """What this needs of ``compute.api.API``: its RPC client, and the server's cell
    context once its host is known to be up."""

    @property
    def compute_rpcapi(self) -> ComputeRPCAPI: ...

    def host_context(self, context: RequestContext, instance: Instance
                      ) -> contextlib.AbstractContextManager[RequestContext]: ...


def _fixed_addresses(instance: Instance) -> list[str]:
    return [ip['address'] for vif in instance.info_cache.network_info
            for ip in model.fixed_ips(vif)]


class InterfacesAPI:
    """os-interface and the fixed-IP actions of one API process."""

    def __init__(self, compute_api: ComputeAPILike) -> None:
        self.compute_api = compute_api

    # -- reading: Neutron's view, as the caller sees it ------------------------------

    def list_ports(self, context: RequestContext, instance: Instance
                   ) -> list[dict[str, Any]]:
        """The server's ports in Neutron (none without Neutron)."""
        if not neutron_client.configured():
            return []
        return neutron_client.Client(context).list_ports(device_id=instance.uuid)

    def show_port(self, context: RequestContext, instance: Instance,
                  port_id: str) -> dict[str, Any]:
        """:raises PortNotFound: no such port, or not the server's"""
        not_found = exception.PortNotFound(
            message='Instance %s does not have a port with id %s' % (instance.uuid,
                                                                   port_id))
        if not neutron_client.configured():
            raise not_found
        try:
            port = neutron_client.Client(context).show_port(port_id)
        except neutron_client.NeutronNotFound as exc:
            raise exception.PortNotFound(port_id=port_id) from exc
        if port.get('device_id') != instance.uuid:
            raise not_found
        return port

    @staticmethod
    def tags(instance: Instance) -> dict[str, str | None]:
        """The device tag of each port of the server, as its host cached them."""
        return {vif['id']: vif.get('tag') for vif in instance.info_cache.network_info}

    # -- changing: checked here, done on the host ---------------------------------------

    def _check(self, context: RequestContext, instance: Instance, method: str) -> None:
        instance_edit.check_instance_lock(context, instance)
        instance_edit.check_instance_state(instance, method, INTERFACE_STATES)

    def attach_interface(self, context: RequestContext, instance: Instance,
                         network_id: str | None, port_id: str | None,
                         requested_ip: str | None, tag: str | None = None) -> model.VIF:
        """Attach a new port on ``network_id`` (the only network available when neither
        is given), or the user's ``port_id``; waits for the host's answer.

        :returns: the VIF the host cached.
        :raises InstanceInvalidState, InstanceIsLocked: (409)
        :raises PortNotFound, NetworkNotFound, PortInUse, NetworkAmbiguous, ...: see
            ``network.requests.resolve_attach`` and the host's ``attach_interface``
        """
        self._check(context, instance, 'attach_interface')
        request = net_requests.resolve_attach(context, network_id, port_id, requested_ip,
                                              tag)
        with self.compute_api.host_context(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.ATTACH_INTERFACE,
                                                want_result=False)
            # The host answers the VIF it attached (a plain dict once over RPC).
            return cast(model.VIF, self.compute_api.compute_rpcapi.attach_interface(
                cctxt, instance, request.get('network_id'), request.get('port_id'),
                requested_ip, tag))

    def detach_interface(self, context: RequestContext, instance: Instance,
                         port_id: str) -> None:
        """:raises PortNotFound: the server has no such interface"""
        self._check(context, instance, 'detach_interface')
        if model.find(instance.info_cache.network_info, port_id) is None:
            raise exception.PortNotFound(
                message='Instance %s does not have a port with id %s' % (instance.uuid,
                                                                       port_id))
        with self.compute_api.host_context(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.DETACH_INTERFACE,
                                                want_result=False)
            self.compute_api.compute_rpcapi.detach_interface(cctxt, instance, port_id)

    def add_fixed_ip(self, context: RequestContext, instance: Instance,
                     network_id: str) -> None:
        """Another address on ``network_id`` (a new interface when the server has no
        port there, checked as an attach is).

        :raises NetworkNotFound: (404)
        """
        self._check(context, instance, 'add_fixed_ip')
        on_network = any(vif.get('network', {}).get('id') == network_id
                         for vif in instance.info_cache.network_info)
        if not on_network:
            net_requests.resolve_attach(context, network_id, None)
        with self.compute_api.host_context(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.ADD_FIXED_IP,
                                                want_result=False)
            self.compute_api.compute_rpcapi.add_fixed_ip_to_instance(cctxt, instance,
                                                                     network_id)

    def remove_fixed_ip(self, context: RequestContext, instance: Instance,
                        address: str) -> None:
        """:raises FixedIpNotFoundForInstance: (400) the server has no such address"""
        self._check(context, instance, 'remove_fixed_ip')
        if address not in _fixed_addresses(instance):
            raise exception.FixedIpNotFoundForInstance(instance_uuid=instance.uuid,
                                                       ip=address)
        with self.compute_api.host_context(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid,
                                                instance_actions.REMOVE_FIXED_IP,
                                                want_result=False)
            self.compute_api.compute_rpcapi.remove_fixed_ip_from_instance(cctxt, instance,
                                                                          address)
