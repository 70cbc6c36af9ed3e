"""Client side of the conductor RPC APIs."""
from __future__ import annotations

from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite import rpc
from novalite.objects import base as objects_base

LOG = logging.getLogger(__name__)

RPC_TOPIC = 'conductor'


class ConductorAPI:
    """The object-indirection API that compute hosts use instead of a database.

    API version history:

    * 1.0 - object_class_action_versions, object_action, object_backport_versions, ping
    """

    VERSION = '1.0'

    def __init__(self) -> None:
        self.client = rpc.get_client(messaging.Target(topic=RPC_TOPIC, version='1.0'))

    def wait_until_ready(self, context: Any, attempt_timeout: int = 5) -> None:
        """Block until a conductor answers. A call to a topic nobody consumes yet is
        dropped by the broker and would wait the whole rpc_response_timeout."""
        attempt = 0
        while True:
            attempt += 1
            try:
                self.client.prepare(timeout=attempt_timeout).call(context, 'ping',
                                                                   arg='ready')
                if attempt > 1:
                    LOG.info('The conductor answered after %d attempts', attempt)
                return
            except messaging.MessagingTimeout:
                LOG.warning('Waiting for a conductor to answer (attempt %d)', attempt)

    def object_class_action_versions(self, context: Any, objname: str, objmethod: str,
                                     object_versions: dict, args: tuple, kwargs: dict) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_class_action_versions', objname=objname,
                          objmethod=objmethod, object_versions=object_versions,
                          args=args, kwargs=kwargs)

    def object_action(self, context: Any, objinst: Any, objmethod: str, args: tuple,
                      kwargs: dict) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_action', objinst=objinst, objmethod=objmethod,
                          args=args, kwargs=kwargs)

    def object_backport_versions(self, context: Any, objinst: Any,
                                 object_versions: dict) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_backport_versions', objinst=objinst,
                          object_versions=object_versions)


class ComputeTaskAPI:
    """The conductor's build and move tasks (namespace ``compute_task``).

    API version history:

    * 1.0 - schedule_and_build_instances, build_instances
    """

    VERSION = '1.0'

    def __init__(self) -> None:
        self.client = rpc.get_client(messaging.Target(topic=RPC_TOPIC,
                                                      namespace='compute_task',
                                                      version='1.0'))

    def schedule_and_build_instances(self, context: Any, build_requests: list,
                                     request_specs: list, image: dict | None,
                                     admin_password: str | None, injected_files: list,
                                     requested_networks: Any, block_device_mapping: list,
                                     tags: list | None = None) -> None:
        cctxt = self.client.prepare()
        cctxt.cast(context, 'schedule_and_build_instances', build_requests=build_requests,
                   request_specs=request_specs, image=image, admin_password=admin_password,
                   injected_files=injected_files, requested_networks=requested_networks,
                   block_device_mapping=block_device_mapping, tags=tags)

    def build_instances(self, context: Any, instances: list, image: dict | None,
                        filter_properties: dict, admin_password: str | None,
                        injected_files: list, requested_networks: Any,
                        block_device_mapping: list, request_spec: Any = None,
                        host_lists: list | None = None) -> None:
        """Reschedule: build ``instances`` on the next alternate of ``host_lists``."""
        cctxt = self.client.prepare()
        cctxt.cast(context, 'build_instances', instances=instances, image=image,
                   filter_properties=filter_properties, admin_password=admin_password,
                   injected_files=injected_files, requested_networks=requested_networks,
                   block_device_mapping=block_device_mapping, request_spec=request_spec,
                   host_lists=host_lists)


def indirection_api() -> ConductorAPI:
    """The conductor client that compute code hands to ``objects.base.indirection``."""
    return ConductorAPI()


__all__ = ['ConductorAPI', 'ComputeTaskAPI', 'indirection_api', 'objects_base']
