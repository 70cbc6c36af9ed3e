"""Client side of the compute RPC API: casts to one compute host."""
from __future__ import annotations

from typing import Any

import oslo_messaging as messaging

from novalite import rpc

RPC_TOPIC = 'compute'


class ComputeAPI:
    """Messages to ``compute.<host>``; the transport is the one of the instance's cell
    when the context is targeted at a cell.

    API version history:

    * 1.0 - build_and_run_instance, terminate_instance
    """

    VERSION = '1.0'

    def __init__(self) -> None:
        self.target = messaging.Target(topic=RPC_TOPIC, version='1.0')

    def _client(self, context: Any, host: str) -> Any:
        transport = getattr(context, 'mq_connection', None)
        return rpc.get_client(self.target, transport=transport).prepare(server=host)

    def build_and_run_instance(self, context: Any, instance: Any, host: str, image: Any,
                               request_spec: Any, filter_properties: dict,
                               admin_password: str | None = None,
                               injected_files: list | None = None,
                               requested_networks: Any = None,
                               block_device_mapping: list | None = None,
                               node: str | None = None, limits: dict | None = None,
                               host_list: list | None = None) -> None:
        self._client(context, host).cast(
            context, 'build_and_run_instance', instance=instance, image=image,
            request_spec=request_spec, filter_properties=filter_properties,
            admin_password=admin_password, injected_files=injected_files or [],
            requested_networks=requested_networks,
            block_device_mapping=block_device_mapping or [], node=node,
            limits=limits or {}, host_list=host_list or [])

    def terminate_instance(self, context: Any, instance: Any, bdms: list | None = None) -> None:
        self._client(context, instance.host).cast(
            context, 'terminate_instance', instance=instance, bdms=bdms or [])
