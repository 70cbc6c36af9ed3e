"""The network API a compute host calls: Neutron's ports, or none without Neutron.

``API()`` gives the Neutron port work (``novalite.network.neutron``) when a Neutron
endpoint is configured (``[neutron] endpoint_override`` or ``auth_type``), else the
network-less API: servers then get no ports, and the compute API refuses a request for
a specific network (``novalite.network.requests``).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from novalite import exception
from novalite.network import client, model, neutron
from novalite.network.neutron import Ctx, InstanceLike
from novalite.network.requests import NetworkRequest


class NetworkAPI(Protocol):
    def allocate_for_instance(self, context: Ctx, instance: InstanceLike,
                              requests: list[NetworkRequest], host: str,
                              security_groups: list[str] | None = None
                              ) -> model.NetworkInfo: ...

    def deallocate_for_instance(self, context: Ctx, instance: InstanceLike,
                                network_info: model.NetworkInfo | None = None,
                                preserve: Iterable[str] = ()) -> None: ...

    def get_instance_nw_info(self, context: Ctx, instance: InstanceLike,
                             current: model.NetworkInfo | None = None
                             ) -> model.NetworkInfo: ...

    def bind_ports_to_host(self, context: Ctx, instance: InstanceLike, host: str,
                           network_info: model.NetworkInfo) -> model.NetworkInfo: ...

    def unbind_ports(self, context: Ctx, instance: InstanceLike,
                     network_info: model.NetworkInfo) -> None: ...

    # Live migration: Neutron's multiple port bindings (the ``binding-extended``
    # extension), as Nova: an inactive binding on the destination, activated once the
    # guest runs there, the source's deleted after.
    def supports_port_binding_extension(self, context: Ctx) -> bool: ...

    def create_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             network_info: model.NetworkInfo) -> model.NetworkInfo: ...

    def activate_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                               network_info: model.NetworkInfo) -> model.NetworkInfo: ...

    def delete_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             port_ids: Iterable[str]) -> None: ...

    def deallocate_port_for_instance(self, context: Ctx, instance: InstanceLike,
                                     vif: model.VIF) -> None: ...

    def add_fixed_ip_to_instance(self, context: Ctx, instance: InstanceLike, network_id: str,
                                 current: model.NetworkInfo) -> model.NetworkInfo: ...

    def remove_fixed_ip_from_instance(self, context: Ctx, instance: InstanceLike, address: str,
                                      current: model.NetworkInfo) -> model.NetworkInfo: ...


class NoNetworkAPI:
    """Without Neutron: nothing to allocate, bind or release."""

    def allocate_for_instance(self, context: Ctx, instance: InstanceLike,
                              requests: list[NetworkRequest], host: str,
                              security_groups: list[str] | None = None
                              ) -> model.NetworkInfo:
        return []

    def deallocate_for_instance(self, context: Ctx, instance: InstanceLike,
                                network_info: model.NetworkInfo | None = None,
                                preserve: Iterable[str] = ()) -> None:
        return None

    def get_instance_nw_info(self, context: Ctx, instance: InstanceLike,
                             current: model.NetworkInfo | None = None
                             ) -> model.NetworkInfo:
        return list(current or [])

    def bind_ports_to_host(self, context: Ctx, instance: InstanceLike, host: str,
                           network_info: model.NetworkInfo) -> model.NetworkInfo:
        return network_info

    def unbind_ports(self, context: Ctx, instance: InstanceLike,
                     network_info: model.NetworkInfo) -> None:
        return None

    def supports_port_binding_extension(self, context: Ctx) -> bool:
        return False

    def create_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             network_info: model.NetworkInfo) -> model.NetworkInfo:
        return network_info

    def activate_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                               network_info: model.NetworkInfo) -> model.NetworkInfo:
        return network_info

    def delete_port_bindings(self, context: Ctx, instance: InstanceLike, host: str,
                             port_ids: Iterable[str]) -> None:
        return None

    def deallocate_port_for_instance(self, context: Ctx, instance: InstanceLike,
                                     vif: model.VIF) -> None:
        return None

    def add_fixed_ip_to_instance(self, context: Ctx, instance: InstanceLike, network_id: str,
                                 current: model.NetworkInfo) -> model.NetworkInfo:
        raise exception.NetworkNotFoundForInstance(instance_id=instance.uuid)

    def remove_fixed_ip_from_instance(self, context: Ctx, instance: InstanceLike, address: str,
                                      current: model.NetworkInfo) -> model.NetworkInfo:
        raise exception.FixedIpNotFoundForInstance(instance_uuid=instance.uuid, ip=address)


def API() -> NetworkAPI:
    return neutron.API() if client.configured() else NoNetworkAPI()
