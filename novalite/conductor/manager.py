"""The conductor's RPC endpoints: object indirection, and build tasks (hops 4 and 6)."""
from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_service import periodic_task
from oslo_versionedobjects import base as ovo_base

from novalite import exception, manager, objects, transient
from novalite.conductor.tasks import (
    build,
    cache_images,
    heal_allocations,
    live_migrate,
    lost_builds,
    migrate,
    rebuild,
    unshelve,
)
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.objects import base as obj_base

if TYPE_CHECKING:
    from novalite.compute import rpcapi as compute_rpcapi_
    from novalite.scheduler import rpcapi as scheduler_rpcapi
    from novalite.scheduler.client import report

LOG = logging.getLogger(__name__)


class ConductorManager(manager.Manager):
    """Runs object methods for compute hosts, which have no database access."""

    target = messaging.Target(version='1.0')

    def __init__(self, host: str | None = None) -> None:
        super().__init__(host=host, service_name='conductor')
        self.compute_task_mgr = ComputeTaskManager()
        self.set_spacing('_check_lost_builds', CONF.conductor.lost_build_check_interval)
        # 0 disables the task: it then returns at once, once a day.
        self.set_spacing('_heal_allocations',
                         CONF.conductor.allocation_heal_interval or 86400)
        # The conductor serves both APIs from one RPC server.
        self.additional_endpoints = [self.compute_task_mgr]

    @periodic_task.periodic_task(spacing=CONF.conductor.lost_build_check_interval,
                                 run_immediately=False)
    def _check_lost_builds(self, context: RequestContext) -> None:
        """Build again the builds that were lost (see lost_builds)."""
        if not CONF.conductor.build_request_timeout:
            return
        lost_builds.redrive_lost_build_requests(context, self.compute_task_mgr.deps)
        lost_builds.redrive_unclaimed_instances(context, self.compute_task_mgr.deps)

    @periodic_task.periodic_task(spacing=CONF.conductor.allocation_heal_interval,
                                 run_immediately=False)
    def _heal_allocations(self, context: RequestContext) -> None:
        """Repair (or report) allocations that disagree with the servers and migrations
        (see heal_allocations)."""
        if not CONF.conductor.allocation_heal_interval:
            return
        heal_allocations.heal_all(context, self.compute_task_mgr.deps.reportclient,
                                  repair=CONF.conductor.allocation_heal_action == 'repair')

    @staticmethod
    def _object_class(objname: str, object_versions: dict[str, str]) -> type:
        classes = ovo_base.VersionedObjectRegistry.obj_classes()[objname]
        wanted = object_versions.get(objname)
        for cls in classes:
            if wanted is None or cls.VERSION == wanted:
                return cls
        return classes[0]

    def ping(self, context: RequestContext, arg: str) -> str:
        """Answer ``arg``: services call this to wait until a conductor is up."""
        return arg

    # Object methods raise NotFound and the like as answers, not as conductor faults.
    @messaging.expected_exceptions(exception.NovaliteException)
    def object_class_action_versions(self, context: RequestContext, objname: str,
                                     objmethod: str, object_versions: dict[str, str],
                                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        objclass = self._object_class(objname, object_versions)
        result = _through_outage('%s.%s' % (objname, objmethod), functools.partial(
            getattr(objclass, objmethod), context, *args, **kwargs))
        if isinstance(result, obj_base.NovaliteObject) and objname in object_versions:
            result = result.obj_to_primitive(target_version=object_versions[objname])
            result = obj_base.NovaliteObject.obj_from_primitive(result, context)
        return result

    @messaging.expected_exceptions(exception.NovaliteException)
    def object_action(self, context: RequestContext, objinst: obj_base.NovaliteObject,
                      objmethod: str, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Run ``objinst.objmethod``; return the fields it changed and the result, which
        the caller's copy of the object applies to itself."""
        # What ``obj_clone`` gives, without deepcopy's generic walk (4 % of a busy
        # conductor's CPU): the object's fields copied all the way down.
        before = obj_base.fresh_copy(objinst)
        result = _through_outage('%s.%s' % (objinst.obj_name(), objmethod), functools.partial(
            getattr(objinst, objmethod), *args, **kwargs))
        updates: dict[str, Any] = {}
        for name, field in objinst.fields.items():
            if not objinst.obj_attr_is_set(name):
                continue
            if not before.obj_attr_is_set(name) or \
                    getattr(before, name) != getattr(objinst, name):
                updates[name] = field.to_primitive(objinst, name, getattr(objinst, name))
        updates['obj_what_changed'] = list(objinst.obj_what_changed())
        return updates, result

    def object_backport_versions(self, context: RequestContext,
                                 objinst: obj_base.NovaliteObject,
                                 object_versions: dict[str, str]) -> dict[str, Any]:
        target = object_versions[objinst.obj_name()]
        return objinst.obj_to_primitive(target_version=target,
                                        version_manifest=object_versions)


def _through_outage(what: str, func: Callable[[], Any]) -> Any:
    """A compute host's object method, retried while the database refuses connections
    for a while, as long as the compute's call has time to wait for the answer."""
    # oslo.messaging registers its timeout with the first transport.
    until = time.monotonic() + OUTAGE_SHARE_OF_CALL * getattr(CONF, 'rpc_response_timeout', 60)
    return transient.call(what, func, until)


# What part of a compute's RPC timeout its object calls may spend retrying here.
OUTAGE_SHARE_OF_CALL = 0.75


class ComputeTaskManager:
    """Build tasks: schedule, create in a cell, hand to a compute host; reschedule."""

    target = messaging.Target(namespace='compute_task', version='1.3')

    def __init__(self, query_client: scheduler_rpcapi.SchedulerAPI | None = None,
                 reportclient: report.SchedulerReportClient | None = None,
                 compute_rpcapi: compute_rpcapi_.ComputeAPI | None = None) -> None:
        self.deps = build.Dependencies(query_client, reportclient, compute_rpcapi)

    def schedule_and_build_instances(self, context: RequestContext,
                                     build_requests: list[objects.BuildRequest],
                                     request_specs: list[objects.RequestSpec],
                                     image: dict[str, Any] | None,
                                     admin_password: str | None, injected_files: list[Any],
                                     requested_networks: build.RequestedNetworks | None,
                                     block_device_mapping: list[Any],
                                     tags: list[str] | None = None) -> None:
        build.schedule_and_build(self.deps, context, build_requests, request_specs,
                                 image, admin_password, injected_files, requested_networks)

    def build_instances(self, context: RequestContext, instances: list[objects.Instance],
                        image: dict[str, Any] | None, filter_properties: dict[str, Any],
                        admin_password: str | None, injected_files: list[Any],
                        requested_networks: build.RequestedNetworks | None,
                        block_device_mapping: list[Any],
                        request_spec: objects.RequestSpec | None = None,
                        host_lists: list[list[objects.Selection]] | None = None) -> None:
        for index, instance in enumerate(instances):
            host_list = host_lists[index] if host_lists and index < len(host_lists) else []
            # The failed build's mappings, or None to read them (a re-drive sends none).
            build.reschedule(self.deps, context, instance, host_list, image,
                             filter_properties, admin_password, injected_files,
                             requested_networks, request_spec,
                             block_device_mapping or None)

    # -- rebuild and unshelve ----------------------------------------------------------

    def rebuild_instance(self, context: RequestContext, instance: objects.Instance,
                         image: dict[str, Any], orig_image_ref: str,
                         orig_sys_metadata: dict[str, str | None],
                         admin_password: str | None, injected_files: list[Any],
                         preserve_ephemeral: bool = False,
                         reimage_boot_volume: bool = False) -> None:
        rebuild.rebuild_instance(self.deps, context, instance, image, orig_image_ref,
                                 orig_sys_metadata, admin_password, injected_files,
                                 preserve_ephemeral, reimage_boot_volume)

    def unshelve_instance(self, context: RequestContext, instance: objects.Instance,
                          request_spec: objects.RequestSpec) -> None:
        unshelve.unshelve_instance(self.deps, context, instance, request_spec)

    # -- moves: resize, cold and live migration, evacuation ------------------------------

    @messaging.expected_exceptions(exception.NoValidHost)
    def migrate_server(self, context: RequestContext, instance: objects.Instance,
                       flavor: objects.Flavor,
                       clean_shutdown: bool = True, host: str | None = None) -> None:
        migrate.migrate_server(self.deps, context, instance, flavor, clean_shutdown, host)

    @messaging.expected_exceptions(exception.NovaliteException)
    def live_migrate_instance(self, context: RequestContext, instance: objects.Instance,
                              host: str | None, block_migration: bool | None,
                              migration: objects.Migration,
                              raise_errors: bool = False, force: bool = False) -> None:
        live_migrate.live_migrate_instance(self.deps, context, instance, host,
                                           block_migration, migration, raise_errors, force)

    def evacuate_instance(self, context: RequestContext, instance: objects.Instance,
                          host: str | None, migration: objects.Migration,
                          image: dict[str, Any] | None, admin_password: str | None) -> None:
        migrate.evacuate_instance(self.deps, context, instance, host, migration, image,
                                  admin_password)

    # -- image pre-caching (os-aggregates/{id}/images) ---------------------------------

    def cache_images(self, context: RequestContext, aggregate: objects.Aggregate,
                     image_ids: list[str]) -> None:
        cache_images.cache_images(self.deps, context, aggregate, image_ids)
