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
    * 1.1 - reboot_instance, stop_instance, start_instance, get_console_output
    * 1.2 - get_diagnostics, get_instance_diagnostics, external_instance_event
    * 1.3 - the server lifecycle: pause, suspend, rescue, password, crash dump,
      resize and migrations, rebuild, snapshot, shelve (each method says which)
    """

    VERSION = '1.3'

    def __init__(self) -> None:
        self.target = messaging.Target(topic=RPC_TOPIC, version='1.0')

    def _client(self, context: Any, host: str, version: str = '1.0') -> Any:
        transport = getattr(context, 'mq_connection', None)
        return rpc.get_client(self.target, transport=transport).prepare(
            server=host, version=version)

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

    def reboot_instance(self, context: Any, instance: Any, reboot_type: str) -> None:
        """:param reboot_type: 'SOFT' or 'HARD'"""
        self._client(context, instance.host, '1.1').cast(
            context, 'reboot_instance', instance=instance, reboot_type=reboot_type)

    def stop_instance(self, context: Any, instance: Any, clean_shutdown: bool = True) -> None:
        self._client(context, instance.host, '1.1').cast(
            context, 'stop_instance', instance=instance, clean_shutdown=clean_shutdown)

    def start_instance(self, context: Any, instance: Any) -> None:
        self._client(context, instance.host, '1.1').cast(
            context, 'start_instance', instance=instance)

    def get_console_output(self, context: Any, instance: Any, tail_length: int | None) -> str:
        """:returns: the guest's console log (its last ``tail_length`` lines if given)"""
        return self._client(context, instance.host, '1.1').call(
            context, 'get_console_output', instance=instance, tail_length=tail_length)

    def get_diagnostics(self, context: Any, instance: Any) -> dict:
        """:returns: the driver's free-form diagnostics of the guest"""
        return self._client(context, instance.host, '1.2').call(
            context, 'get_diagnostics', instance=instance)

    def get_instance_diagnostics(self, context: Any, instance: Any) -> dict:
        """:returns: the guest's diagnostics in the standard format (API 2.48)"""
        return self._client(context, instance.host, '1.2').call(
            context, 'get_instance_diagnostics', instance=instance)

    def external_instance_event(self, context: Any, instances: list, events: list,
                                host: str) -> None:
        """:param events: dicts with name, tag, status and server_uuid"""
        self._client(context, host, '1.2').cast(
            context, 'external_instance_event', instances=instances, events=events)
