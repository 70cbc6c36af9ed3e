"""Client side of the conductor RPC APIs: the one client every service uses.

``ConductorAPI`` is the object indirection of compute hosts (they have no database);
``ComputeTaskAPI`` the build and move tasks the compute API and compute hosts ask for.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite import objects, rpc
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.image import glance
from novalite.objects import base as objects_base

if TYPE_CHECKING:
    from novalite.network.requests import NetworkRequest

LOG = logging.getLogger(__name__)

RPC_TOPIC = 'conductor'

# A ping to a conductor that is not up yet is dropped by the broker (its queue does not
# exist), so the wait for its answer is all lost time: short pings while the services
# start together, then the configured RPC timeout.
EARLY_PING_TIMEOUT = 0.5
EARLY_PING_PERIOD = 30.0


class ConductorAPI:
    """The object-indirection API that compute hosts use instead of a database.

    API version history:

    * 1.0 - object_class_action_versions, object_action, object_backport_versions, ping
    """

    VERSION = '1.0'

    def __init__(self) -> None:
        self.client = rpc.get_client(messaging.Target(topic=RPC_TOPIC, version='1.0'))

    def wait_until_ready(self, context: RequestContext,
                         early_timeout: float = EARLY_PING_TIMEOUT,
                         early_period: float = EARLY_PING_PERIOD) -> None:
        """Block until a conductor answers a ping, as Nova's compute does at start-up.

        A compute started together with its conductor (systemd starts every unit at
        once) would otherwise send its first object call before the conductor's queue
        exists; the broker drops it and the call waits the whole ``rpc_response_timeout``.

        :param early_timeout: seconds each ping waits during the first ``early_period``
            seconds; after that each waits ``[DEFAULT] rpc_response_timeout``
        """
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            early = time.monotonic() - started < early_period
            # None: the client's own timeout, [DEFAULT] rpc_response_timeout.
            timeout = early_timeout if early else None
            try:
                self.client.prepare(timeout=timeout).call(context, 'ping', arg='ready')
            except messaging.MessagingTimeout:
                # Quiet while services are starting together; a conductor still
                # missing after that is worth a warning per attempt.
                log = LOG.debug if early else LOG.warning
                log('No conductor answered (attempt %d); is novalite-conductor running?',
                    attempt)
                continue
            if attempt > 1:
                LOG.info('A conductor answered after %d attempts (%.1f s)', attempt,
                         time.monotonic() - started)
            return

    # The object methods carry whatever the remoted object method takes and returns.
    def object_class_action_versions(self, context: RequestContext, objname: str,
                                     objmethod: str, object_versions: dict[str, str],
                                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_class_action_versions', objname=objname,
                          objmethod=objmethod, object_versions=object_versions,
                          args=args, kwargs=kwargs)

    def object_action(self, context: RequestContext, objinst: objects_base.NovaliteObject,
                      objmethod: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_action', objinst=objinst, objmethod=objmethod,
                          args=args, kwargs=kwargs)

    def object_backport_versions(self, context: RequestContext,
                                 objinst: objects_base.NovaliteObject,
                                 object_versions: dict[str, str]) -> Any:
        cctxt = self.client.prepare()
        return cctxt.call(context, 'object_backport_versions', objinst=objinst,
                          object_versions=object_versions)


class ComputeTaskAPI:
    """The conductor's build and move tasks (namespace ``compute_task``).

    API version history:

    * 1.0 - schedule_and_build_instances, build_instances
    * 1.1 - cache_images
    * 1.2 - rebuild_instance takes reimage_boot_volume
    * 1.3 - live_migrate_instance takes force
    """

    VERSION = '1.3'

    def __init__(self) -> None:
        self.client = rpc.get_client(messaging.Target(topic=RPC_TOPIC,
                                                      namespace='compute_task',
                                                      version='1.0'))

    def schedule_and_build_instances(self, context: RequestContext,
                                     build_requests: list[objects.BuildRequest],
                                     request_specs: list[objects.RequestSpec],
                                     image: dict[str, Any] | None,
                                     admin_password: str | None,
                                     injected_files: list[Any],
                                     requested_networks: list[NetworkRequest] | None,
                                     block_device_mapping: list[Any],
                                     tags: list[str] | None = None) -> None:
        """Schedule and build the servers of a create (a cast: the API answers 202)."""
        cctxt = self.client.prepare()
        cctxt.cast(context, 'schedule_and_build_instances', build_requests=build_requests,
                   request_specs=request_specs, image=image, admin_password=admin_password,
                   injected_files=injected_files, requested_networks=requested_networks,
                   block_device_mapping=block_device_mapping, tags=tags)

    def build_instances(self, context: RequestContext, instances: list[objects.Instance],
                        image: dict[str, Any] | None, filter_properties: dict[str, Any],
                        admin_password: str | None, injected_files: list[Any],
                        requested_networks: list[NetworkRequest] | None,
                        block_device_mapping: list[Any],
                        request_spec: objects.RequestSpec | None = None,
                        host_lists: list[list[objects.Selection]] | None = None) -> None:
        """Reschedule: build ``instances`` on the next alternate of ``host_lists``."""
        cctxt = self.client.prepare()
        cctxt.cast(context, 'build_instances', instances=instances, image=image,
                   filter_properties=filter_properties, admin_password=admin_password,
                   injected_files=injected_files, requested_networks=requested_networks,
                   block_device_mapping=block_device_mapping, request_spec=request_spec,
                   host_lists=host_lists)

    def rebuild_instance(self, context: RequestContext, instance: objects.Instance,
                         image: dict[str, Any], orig_image_ref: str,
                         orig_sys_metadata: dict[str, str | None], admin_password: str | None,
                         injected_files: list[Any], preserve_ephemeral: bool = False,
                         reimage_boot_volume: bool = False) -> None:
        """Rebuild on the server's host, once a new image is found to suit it; with
        ``reimage_boot_volume`` (1.2, sent only then) Cinder re-images the root volume
        of the volume-backed server first."""
        extra: dict[str, Any] = {}
        version = '1.0'
        if reimage_boot_volume:
            extra['reimage_boot_volume'] = True
            version = '1.2'
        self.client.prepare(version=version).cast(
            context, 'rebuild_instance', instance=instance, image=image,
            orig_image_ref=orig_image_ref, orig_sys_metadata=orig_sys_metadata,
            admin_password=admin_password, injected_files=injected_files,
            preserve_ephemeral=preserve_ephemeral, **extra)

    def unshelve_instance(self, context: RequestContext, instance: objects.Instance,
                          request_spec: objects.RequestSpec) -> None:
        """Power a shelved server on, or schedule and spawn an offloaded one."""
        self.client.prepare().cast(context, 'unshelve_instance', instance=instance,
                                   request_spec=request_spec)

    def migrate_server(self, context: RequestContext, instance: objects.Instance,
                       flavor: objects.Flavor, clean_shutdown: bool = True,
                       host: str | None = None) -> None:
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

    def live_migrate_instance(self, context: RequestContext, instance: objects.Instance,
                              host: str | None, block_migration: bool | None,
                              migration: objects.Migration | None,
                              async_: bool = True, force: bool = False) -> None:
        """Live-migrate; before API 2.34 (``async_`` False) a call, so that a
        pre-check error reaches the caller (400). ``force``: take ``host`` without
        the scheduler (API 2.30 to 2.67 when asked; before 2.30 any named host)."""
        cctxt = self.client.prepare()
        kwargs = dict(instance=instance, host=host, block_migration=block_migration,
                      migration=migration, raise_errors=not async_)
        if force:
            kwargs['force'] = True
            cctxt = self.client.prepare(version='1.3')
        if async_:
            cctxt.cast(context, 'live_migrate_instance', **kwargs)
        else:
            cctxt.call(context, 'live_migrate_instance', **kwargs)

    def evacuate_instance(self, context: RequestContext, instance: objects.Instance,
                          host: str | None, migration: objects.Migration | None,
                          image: dict[str, Any] | None, admin_password: str | None) -> None:
        """Rebuild the server of a dead host on another (Nova's rebuild_instance with
        evacuate): a cast."""
        self.client.prepare().cast(context, 'evacuate_instance', instance=instance,
                                   host=host, migration=migration, image=image,
                                   admin_password=admin_password)

    def cache_images(self, context: RequestContext, aggregate: objects.Aggregate,
                     image_ids: list[str], image_api: glance.API | None = None) -> None:
        """Have the computes of ``aggregate`` pre-cache the images (a cast, 1.1), once
        the caller is seen to have every one.

        :raises ImageNotFound: an image is unknown to Glance (or hidden from the
            caller); nothing is asked of any host
        """
        image_api = image_api or glance.API()
        for image_id in image_ids:
            image_api.get(context, image_id)
        self.client.prepare(version='1.1').cast(context, 'cache_images',
                                                aggregate=aggregate, image_ids=image_ids)

