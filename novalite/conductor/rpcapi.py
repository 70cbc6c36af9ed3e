"""Client side of the conductor RPC APIs."""
from __future__ import annotations

from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite import rpc
from novalite.conf import CONF
from novalite.context import RequestContext
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
    * 1.1 - cache_images
    """

    VERSION = '1.1'

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

    def rebuild_instance(self, context: Any, instance: Any, image: dict,
                         orig_image_ref: str, orig_sys_metadata: dict,
                         admin_password: str | None, injected_files: list,
                         preserve_ephemeral: bool = False) -> None:
        """Rebuild on the server's host, once a new image is found to suit it."""
        self.client.prepare().cast(
            context, 'rebuild_instance', instance=instance, image=image,
            orig_image_ref=orig_image_ref, orig_sys_metadata=orig_sys_metadata,
            admin_password=admin_password, injected_files=injected_files,
            preserve_ephemeral=preserve_ephemeral)

    def unshelve_instance(self, context: Any, instance: Any, request_spec: Any) -> None:
        """Power a shelved server on, or schedule and spawn an offloaded one."""
        self.client.prepare().cast(context, 'unshelve_instance', instance=instance,
                                   request_spec=request_spec)


    def migrate_server(self, context: Any, instance: Any, flavor: Any,
                       clean_shutdown: bool = True, host: str | None = None) -> None:
        """Resize to ``flavor``, or cold-migrate (the same flavor, to ``host`` if
        given): a call that returns once a destination is chosen, as Nova's, so that a
        move with no host is refused to the caller (NoValidHost, a 400).

        :raises NoValidHost: no host can take the server; it is left as it was
        """
        # Longer than the conductor's own wait for the scheduler, which it reports.
        timeout = CONF.rpc_response_timeout_scheduler + CONF.rpc_response_timeout
        self.client.prepare(timeout=timeout).call(
            context, 'migrate_server', instance=instance, flavor=flavor,
            clean_shutdown=clean_shutdown, host=host)

    def live_migrate_instance(self, context: Any, instance: Any, host: str | None,
                              block_migration: bool | None, migration: Any,
                              async_: bool = True) -> None:
        """Live-migrate; before API 2.34 (``async_`` False) a call, so that a
        pre-check error reaches the caller (400)."""
        cctxt = self.client.prepare()
        kwargs = dict(instance=instance, host=host, block_migration=block_migration,
                      migration=migration, raise_errors=not async_)
        if async_:
            cctxt.cast(context, 'live_migrate_instance', **kwargs)
        else:
            cctxt.call(context, 'live_migrate_instance', **kwargs)

    def evacuate_instance(self, context: Any, instance: Any, host: str | None,
                          migration: Any, image: Any, admin_password: str | None) -> None:
        """Rebuild the server of a dead host on another (Nova's rebuild_instance with
        evacuate): a cast."""
        self.client.prepare().cast(context, 'evacuate_instance', instance=instance,
                                   host=host, migration=migration, image=image,
                                   admin_password=admin_password)

    def cache_images(self, context: RequestContext, aggregate: Any, image_ids: list[str]) -> None:
        """Have the computes of ``aggregate`` pre-cache the images (a cast, 1.1)."""
        self.client.prepare(version='1.1').cast(context, 'cache_images',
                                                aggregate=aggregate, image_ids=image_ids)


def indirection_api() -> ConductorAPI:
    """The conductor client that compute code hands to ``objects.base.indirection``."""
    return ConductorAPI()


__all__ = ['ConductorAPI', 'ComputeTaskAPI', 'indirection_api', 'objects_base']
