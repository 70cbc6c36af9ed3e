"""The compute host's RPC endpoint: accept, lock, hand off to a flow module.

Compute never touches a database: every object method here goes to the conductor
(see ``objects.base.indirection``).
"""
from __future__ import annotations

import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import oslo_messaging as messaging
from oslo_concurrency import lockutils
from oslo_log import log as logging
from oslo_service import periodic_task

from novalite import exception, executor, manager, objects
from novalite.compute import (
    build,
    consoles,
    deferred_delete,
    delete,
    diagnostics,
    evacuate,
    external_events,
    guest_audit,
    image_cache,
    inplace,
    instance_events,
    interfaces,
    live_migration,
    live_migration_dest,
    port_audit,
    power,
    power_sync,
    rebuild,
    rescue,
    resize,
    resource_tracker,
    shelve,
    snapshot,
    usage_audit,
    volume_attach,
    volume_swap,
)
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.network import api as network_api
from novalite.objects import base as obj_base
from novalite.scheduler.client import report
from novalite.virt import driver as virt_driver
from novalite.volume import cinder

if TYPE_CHECKING:
    from novalite.conductor.rpcapi import ComputeTaskAPI, ConductorAPI
    from novalite.network.requests import NetworkRequest

LOG = logging.getLogger(__name__)


class InstanceLock:
    """The lock of one instance on this host, as ``threading.Lock`` is used (``with``,
    ``acquire(blocking=False)``, ``release``, ``locked``). Its semaphore lives in the
    manager's ``lockutils.Semaphores`` while someone holds this object, and is freed
    with the last holder."""

    def __init__(self, semaphore: threading.Semaphore) -> None:
        self._semaphore = semaphore

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        return self._semaphore.acquire(blocking, timeout)

    def release(self) -> None:
        self._semaphore.release()

    def locked(self) -> bool:
        """Whether someone holds the lock now."""
        if self._semaphore.acquire(blocking=False):
            self._semaphore.release()
            return False
        return True

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: types.TracebackType | None) -> None:
        self.release()


class ComputeManager(manager.Manager):
    """Builds and deletes the instances of one host.

    Collaborators come through the constructor so tests can pass their own.
    """

    target = messaging.Target(version='1.10')

    def __init__(self, host: str | None = None, driver: virt_driver.ComputeDriver | None = None,
                 reportclient: report.SchedulerReportClient | None = None,
                 compute_task_api: ComputeTaskAPI | None = None,
                 network_api_: network_api.NetworkAPI | None = None,
                 volume_api: cinder.API | None = None) -> None:
        super().__init__(host=host, service_name='compute')
        self.instance_events = instance_events.InstanceEvents()
        virtapi = instance_events.ComputeVirtAPI(self.instance_events)
        self.driver = driver or virt_driver.load_compute_driver(virtapi)
        if getattr(self.driver, 'virtapi', None) is None:
            self.driver.virtapi = virtapi
        self.reportclient = reportclient or report.SchedulerReportClient()
        self.compute_task_api = compute_task_api or conductor_rpcapi.ComputeTaskAPI()
        self.network_api: network_api.NetworkAPI = network_api_ or network_api.API()
        self.volume_api = volume_api or cinder.API()
        self.rt = resource_tracker.ResourceTracker(self.host, self.driver, self.reportclient)
        # Live migrations from this host: queued and running, by instance uuid.
        self.live_migrations = live_migration.LiveMigrations()
        # Named locks that go away with their last holder (a dict of locks, one per
        # instance ever seen, grew for as long as the service ran).
        self._instance_locks = lockutils.Semaphores()
        # Object calls of work that starts on a driver thread (lifecycle events) go
        # where the service's go: captured in init_host.
        self._indirection_api: ConductorAPI | None = None
        if CONF.update_resources_interval:
            self.set_spacing('update_available_resource', CONF.update_resources_interval)
        self.set_spacing('sync_power_states', CONF.compute.sync_power_state_interval)
        self.set_spacing('_audit_ports', CONF.neutron.port_audit_interval)
        self.set_spacing('_retry_pending_deletes', CONF.compute.pending_delete_interval)

    def instance_lock(self, instance_uuid: str) -> InstanceLock:
        """The lock that serialises all work on one instance on this host."""
        return InstanceLock(self._instance_locks.get(instance_uuid))

    def init_host(self) -> None:
        from novalite import context as nl_context
        self.driver.init_host(self.host)
        context = nl_context.get_admin_context()
        for nodename in self.driver.get_available_nodes():
            self.rt.update_available_resource(context, nodename)
        build.recover_interrupted_builds(self, context)
        volume_attach.resume_detaches(self, context)
        live_migration.recover_interrupted(self, context)
        evacuate.destroy_evacuated_instances(self, context)
        guest_audit.audit_guests(self, context)
        self._indirection_api = obj_base.current_indirection_api()
        self.driver.register_event_listener(self.handle_lifecycle_event)

    def cleanup_host(self) -> None:
        live_migration.stop(self)
        volume_attach.stop_detaches(self)
        self.driver.cleanup_host(self.host)

    @periodic_task.periodic_task(spacing=CONF.update_resources_interval, run_immediately=False)
    def update_available_resource(self, context: RequestContext) -> None:
        for nodename in self.driver.get_available_nodes():
            try:
                self.rt.update_available_resource(context, nodename)
            except Exception:
                LOG.exception('Error updating resources for node %s', nodename)

    @periodic_task.periodic_task(spacing=30, run_immediately=False)
    def _check_instance_build_time(self, context: RequestContext) -> None:
        """ERROR for builds on this host older than ``[compute] build_timeout`` that no
        build is working on; the younger ones are scheduled again."""
        if CONF.compute.build_timeout:
            build.fail_stale_builds(self, context, CONF.compute.build_timeout)
        build.redrive_orphaned_builds(self, context)

    @periodic_task.periodic_task(spacing=CONF.compute.pending_delete_interval,
                                 run_immediately=False)
    def _retry_pending_deletes(self, context: RequestContext) -> None:
        """Finish the deletes of this host's instances left DELETING by an outage of
        Placement, the bus or the database (no delete running on them)."""
        if CONF.compute.pending_delete_interval > 0:
            delete.retry_pending_deletes(self, context, CONF.compute.pending_delete_grace)

    @periodic_task.periodic_task(spacing=CONF.neutron.port_audit_interval,
                                 run_immediately=False)
    def _audit_ports(self, context: RequestContext) -> None:
        """Release the ports left bound to this host by deletes and failed builds that
        could not reach Neutron."""
        if CONF.neutron.port_audit_interval > 0:
            try:
                port_audit.audit_ports(self, context)
            except Exception as exc:
                LOG.warning('Port audit failed: %s', exc)

    @periodic_task.periodic_task(spacing=60, run_immediately=False)
    def _instance_usage_audit(self, context: RequestContext) -> None:
        """Once per audit period: an instance.exists notification for each instance of
        this host, the run recorded in the task log (``[DEFAULT] instance_usage_audit``)."""
        if CONF.instance_usage_audit:
            usage_audit.audit_instance_usage(self, context)

    # Nova runs it every [DEFAULT] instance_delete_interval, 300 seconds by default.
    @periodic_task.periodic_task(spacing=300, run_immediately=False)
    def _cleanup_expired_console_auth_tokens(self, context: RequestContext) -> None:
        """Delete the cell's expired console tokens (a proxy refuses them anyway)."""
        objects.ConsoleAuthToken.clean_expired_console_auths(context)

    @periodic_task.periodic_task(spacing=600, run_immediately=False)
    def sync_power_states(self, context: RequestContext) -> None:
        """Align the recorded power state of this host's instances with their guests
        (what lifecycle events missed)."""
        power_sync.sync_power_states(self, context)

    def handle_lifecycle_event(self, instance_uuid: str, event: str) -> None:
        """A guest changed power state (``event``: started, stopped, paused, resumed,
        suspended). Called on the driver's event thread: the work runs on a thread of
        its own, under the instance lock, so a guest that stops on its own is seen as
        stopped at once."""
        with obj_base.indirection(self._indirection_api):
            executor.spawn(self._locked_lifecycle_event, instance_uuid, event)

    def _locked_lifecycle_event(self, instance_uuid: str, event: str) -> None:
        from novalite import context as nl_context
        with self.instance_lock(instance_uuid):
            power_sync.handle_lifecycle_event(self, nl_context.get_admin_context(),
                                              instance_uuid, event)

    # -- RPC endpoints -----------------------------------------------------------------

    def build_and_run_instance(self, context: RequestContext, instance: objects.Instance,
                               image: dict | None, request_spec: objects.RequestSpec,
                               filter_properties: dict, admin_password: str | None = None,
                               injected_files: list | None = None,
                               requested_networks: list[NetworkRequest] | None = None,
                               block_device_mapping: list | None = None, node: str | None = None,
                               limits: dict | None = None, host_list: list | None = None) -> None:
        """Build in the background: a cast must not hold the RPC worker for the build."""
        request = build.BuildRequestArgs(
            image=image, request_spec=request_spec, filter_properties=filter_properties,
            admin_password=admin_password, injected_files=injected_files or [],
            requested_networks=requested_networks, node=node or self.host,
            host_list=host_list or [], block_device_mapping=block_device_mapping or [])
        executor.spawn(self._locked_build, context, instance, request)

    def _locked_build(self, context: RequestContext, instance: objects.Instance,
                      request: build.BuildRequestArgs) -> None:
        with self.instance_lock(instance.uuid):
            build.build_and_run_instance(self, context, instance, request)

    def terminate_instance(self, context: RequestContext, instance: objects.Instance,
                           bdms: list | None = None) -> None:
        # A build waiting for Neutron's events holds the lock: end its wait first.
        self.instance_events.clear(instance.uuid)
        with self.instance_lock(instance.uuid):
            delete.terminate_or_leave_pending(self, context, instance, bdms)

    def reboot_instance(self, context: RequestContext, instance: objects.Instance,
                        reboot_type: str) -> None:
        executor.spawn(self._locked, power.reboot_instance, context, instance, reboot_type)

    def stop_instance(self, context: RequestContext, instance: objects.Instance,
                      clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, power.stop_instance, context, instance, clean_shutdown)

    def start_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, power.start_instance, context, instance)

    def get_console_output(self, context: RequestContext, instance: objects.Instance,
                           tail_length: int | None = None) -> str:
        return power.get_console_output(self, context, instance, tail_length)

    def get_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        return diagnostics.get_diagnostics(self, context, instance)

    def get_instance_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        return diagnostics.get_instance_diagnostics(self, context, instance)

    def get_host_uptime(self, context: RequestContext) -> str:
        """The host's ``uptime`` line (NotImplementedError from a driver that cannot)."""
        return self.driver.get_host_uptime()

    # -- the host itself (os-hosts): the driver answers --------------------------------

    @messaging.expected_exceptions(NotImplementedError)
    def host_power_action(self, context: RequestContext, action: str) -> str:
        return self.driver.host_power_action(action)

    @messaging.expected_exceptions(NotImplementedError)
    def host_maintenance_mode(self, context: RequestContext, host: str, mode: bool) -> str:
        return self.driver.host_maintenance_mode(host, mode)

    def set_host_enabled(self, context: RequestContext, enabled: bool) -> str:
        """Tag this host's providers with COMPUTE_STATUS_DISABLED (or untag them), so
        the scheduler leaves it out (or takes it again) at once; then the driver's
        answer, and a driver that has nothing to do answers as asked."""
        self.rt.set_service_disabled(context, not enabled)
        try:
            return self.driver.set_host_enabled(enabled)
        except NotImplementedError:
            return 'enabled' if enabled else 'disabled'

    def external_instance_event(self, context: RequestContext, instances: list[objects.Instance],
                                events: list[dict[str, Any]]) -> None:
        """Wake what waits for an event at once (a build waiting for its VIFs holds the
        instance lock); handle the rest off the RPC worker, under the instance's lock."""
        by_uuid = {instance.uuid: instance for instance in instances}
        for event in events:
            instance = by_uuid.get(event['server_uuid'])
            if instance is None:
                LOG.warning('Event %s for instance %s, which was not sent along',
                            event['name'], event['server_uuid'])
                continue
            if self.instance_events.pop(instance.uuid, event['name'], event.get('tag'),
                                        event.get('status') or 'completed'):
                continue
            if external_events.needs_work(instance, event):
                executor.spawn(self._locked, external_events.handle_event, context, instance, event)

    def _locked(self, flow: Callable[..., object], context: RequestContext,
                instance: objects.Instance, *args: object) -> None:
        """Run a power flow under the instance lock, off the RPC worker (a clean
        shutdown may take ``shutdown_timeout`` seconds)."""
        with self.instance_lock(instance.uuid):
            flow(self, context, instance, *args)

    # -- network interfaces and fixed IPs (flows in compute/interfaces.py) -------------

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound,
                                   exception.Conflict, exception.Forbidden,
                                   exception.QuotaError)
    def attach_interface(self, context: RequestContext, instance: objects.Instance,
                         network_id: str | None, port_id: str | None, requested_ip: str | None,
                         tag: str | None = None) -> dict:
        """A call: the API waits for the VIF, so the work runs on this worker."""
        with self.instance_lock(instance.uuid):
            return dict(interfaces.attach_interface(self, context, instance, network_id,
                                                    port_id, requested_ip, tag))

    def detach_interface(self, context: RequestContext, instance: objects.Instance,
                         port_id: str) -> None:
        executor.spawn(self._locked, interfaces.detach_interface, context, instance, port_id)

    def add_fixed_ip_to_instance(self, context: RequestContext, instance: objects.Instance,
                                 network_id: str) -> None:
        executor.spawn(self._locked, interfaces.add_fixed_ip, context, instance, network_id)

    def remove_fixed_ip_from_instance(self, context: RequestContext, instance: objects.Instance,
                                      address: str) -> None:
        executor.spawn(self._locked, interfaces.remove_fixed_ip, context, instance, address)

    # -- volumes (flows in compute/volume_attach.py) ------------------------------------

    def reserve_block_device_name(self, context: RequestContext, instance: objects.Instance,
                                  device: str | None, volume_id: str,
                                  disk_bus: str | None = None, device_type: str | None = None,
                                  tag: str | None = None, delete_on_termination: bool = False
                                  ) -> objects.BlockDeviceMapping:
        with self.instance_lock(instance.uuid):
            return volume_attach.reserve_block_device_name(
                self, context, instance, device, volume_id, disk_bus, device_type, tag,
                delete_on_termination)

    def attach_volume(self, context: RequestContext, instance: objects.Instance,
                      bdm: objects.BlockDeviceMapping) -> None:
        executor.spawn(self._locked, volume_attach.attach_volume, context, instance, bdm)

    def detach_volume(self, context: RequestContext, instance: objects.Instance,
                      volume_id: str, attachment_id: str | None = None) -> None:
        executor.spawn(self._locked, volume_attach.detach_volume, context, instance,
                       volume_id, attachment_id)

    def swap_volume(self, context: RequestContext, instance: objects.Instance,
                    old_volume_id: str, new_volume_id: str, new_attachment_id: str) -> None:
        executor.spawn(self._locked, volume_swap.swap_volume, context, instance,
                       old_volume_id, new_volume_id, new_attachment_id)

    # -- consoles (flows in compute/consoles.py) ------------------------------------------

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound,
                                   exception.Conflict)
    def get_vnc_console(self, context: RequestContext, instance: objects.Instance,
                        console_type: str) -> dict:
        return consoles.get_vnc_console(self, context, instance, console_type)

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound,
                                   exception.Conflict)
    def get_serial_console(self, context: RequestContext, instance: objects.Instance,
                           console_type: str) -> dict:
        return consoles.get_serial_console(self, context, instance, console_type)

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound)
    def validate_console_port(self, context: RequestContext, instance: objects.Instance,
                              port: int, console_type: str) -> bool:
        return consoles.validate_console_port(self, context, instance, port, console_type)

    # -- image pre-caching (flow in compute/image_cache.py) ------------------------------

    def cache_images(self, context: RequestContext, image_ids: list[str]) -> dict[str, str]:
        """A call from the conductor: answers once every image is cached (or failed)."""
        return image_cache.cache_images(self, context, image_ids)

    # -- rebuild, snapshots, shelve ----------------------------------------------------

    def rebuild_instance(self, context: RequestContext, instance: objects.Instance, image: dict,
                         admin_password: str | None, injected_files: list,
                         preserve_ephemeral: bool = False,
                         reimage_boot_volume: bool = False) -> None:
        executor.spawn(self._locked, rebuild.rebuild_instance, context, instance, image,
                       admin_password, injected_files, preserve_ephemeral,
                       reimage_boot_volume)

    def snapshot_instance(self, context: RequestContext, instance: objects.Instance,
                          image_id: str) -> None:
        executor.spawn(self._locked, snapshot.snapshot_instance, context, instance, image_id)

    def backup_instance(self, context: RequestContext, instance: objects.Instance, image_id: str,
                        backup_type: str, rotation: int) -> None:
        executor.spawn(self._locked, snapshot.backup_instance, context, instance, image_id,
                       backup_type, rotation)

    def shelve_instance(self, context: RequestContext, instance: objects.Instance, image_id: str,
                        clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, shelve.shelve_instance, context, instance, image_id,
                       clean_shutdown)

    def shelve_offload_instance(self, context: RequestContext, instance: objects.Instance,
                                clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, shelve.shelve_offload_instance, context, instance,
                       clean_shutdown)

    def unshelve_instance(self, context: RequestContext, instance: objects.Instance,
                          image: dict | None = None, node: str | None = None) -> None:
        executor.spawn(self._locked, shelve.unshelve_instance, context, instance, image, node)

    @periodic_task.periodic_task(spacing=CONF.shelved_poll_interval, run_immediately=False)
    def _poll_shelved_instances(self, context: RequestContext) -> None:
        """Offload the SHELVED instances of this host older than
        ``[DEFAULT] shelved_offload_time``."""
        if CONF.shelved_poll_interval > 0:
            shelve.offload_expired(self, context)

    # -- in-place actions: pause, suspend, rescue, password, crash dump, soft delete ----

    def pause_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, inplace.pause_instance, context, instance)

    def unpause_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, inplace.unpause_instance, context, instance)

    def suspend_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, inplace.suspend_instance, context, instance)

    def resume_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, inplace.resume_instance, context, instance)

    def rescue_instance(self, context: RequestContext, instance: objects.Instance,
                        rescue_password: str | None, rescue_image_ref: str | None = None,
                        clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, rescue.rescue_instance, context, instance, rescue_password,
                       rescue_image_ref, clean_shutdown)

    def unrescue_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, rescue.unrescue_instance, context, instance)

    def set_admin_password(self, context: RequestContext, instance: objects.Instance,
                           new_pass: str) -> None:
        """A call: the API waits for the answer, so the work runs on this worker."""
        with self.instance_lock(instance.uuid):
            inplace.set_admin_password(self, context, instance, new_pass)

    def trigger_crash_dump(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, inplace.trigger_crash_dump, context, instance)

    def soft_delete_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, deferred_delete.soft_delete_instance, context, instance)

    def restore_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        executor.spawn(self._locked, deferred_delete.restore_instance, context, instance)

    @periodic_task.periodic_task(spacing=CONF.reclaim_instance_interval,
                                 run_immediately=False)
    def _reclaim_queued_deletes(self, context: RequestContext) -> None:
        """Delete this host's SOFT_DELETED instances older than
        ``[DEFAULT] reclaim_instance_interval``."""
        if CONF.reclaim_instance_interval > 0:
            deferred_delete.reclaim_queued_deletes(self, context,
                                                   CONF.reclaim_instance_interval)

    # -- resize, migrations, evacuation (flows in compute/resize.py, evacuate.py) ------

    def prep_resize(self, context: RequestContext, instance: objects.Instance,
                    flavor: objects.Flavor, migration: objects.Migration, node: str,
                    clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, resize.prep_resize, context, instance, flavor, migration, node,
                       clean_shutdown)

    def resize_instance(self, context: RequestContext, instance: objects.Instance,
                        migration: objects.Migration, flavor: objects.Flavor,
                        clean_shutdown: bool = True) -> None:
        executor.spawn(self._locked, resize.resize_instance, context, instance, migration, flavor,
                       clean_shutdown)

    def finish_resize(self, context: RequestContext, instance: objects.Instance,
                      migration: objects.Migration, disk_info: dict) -> None:
        executor.spawn(self._locked, resize.finish_resize, context, instance, migration, disk_info)

    def confirm_resize(self, context: RequestContext, instance: objects.Instance,
                       migration: objects.Migration) -> None:
        executor.spawn(self._locked, resize.confirm_resize, context, instance, migration)

    def revert_resize(self, context: RequestContext, instance: objects.Instance,
                      migration: objects.Migration) -> None:
        executor.spawn(self._locked, resize.revert_resize, context, instance, migration)

    def finish_revert_resize(self, context: RequestContext, instance: objects.Instance,
                             migration: objects.Migration) -> None:
        executor.spawn(self._locked, resize.finish_revert_resize, context, instance, migration)

    # -- live migration (flows in compute/live_migration.py, live_migration_dest.py) ---

    @messaging.expected_exceptions(exception.MigrationPreCheckError)
    def check_can_live_migrate_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           block_migration: bool | None,
                                           migration: objects.Migration
                                           ) -> objects.LiveMigrateData:
        return live_migration_dest.check_can_live_migrate_destination(
            self, context, instance, block_migration, migration)

    @messaging.expected_exceptions(exception.MigrationPreCheckError)
    def check_can_live_migrate_source(self, context: RequestContext,
                                      instance: objects.Instance,
                                      migrate_data: objects.LiveMigrateData
                                      ) -> objects.LiveMigrateData:
        return live_migration.check_can_live_migrate_source(self, context, instance,
                                                            migrate_data)

    @messaging.expected_exceptions(exception.MigrationError)
    def pre_live_migration(self, context: RequestContext, instance: objects.Instance,
                           migrate_data: objects.LiveMigrateData) -> objects.LiveMigrateData:
        return live_migration_dest.pre_live_migration(self, context, instance, migrate_data)

    def live_migration(self, context: RequestContext, instance: objects.Instance, dest: str,
                       block_migration: bool, migration: objects.Migration,
                       migrate_data: objects.LiveMigrateData) -> None:
        """Queued on the host's live migration executor (``[DEFAULT]
        max_concurrent_live_migrations`` at a time); no instance lock is held while it
        runs, so that abort and force complete reach it."""
        live_migration.queue(self, context, instance, dest, block_migration, migration,
                             migrate_data)

    def post_live_migration_at_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           block_migration: bool,
                                           migrate_data: objects.LiveMigrateData) -> None:
        live_migration_dest.post_live_migration_at_destination(
            self, context, instance, block_migration, migrate_data)

    def rollback_live_migration_at_destination(self, context: RequestContext,
                                               instance: objects.Instance,
                                               destroy_disks: bool,
                                               migrate_data: objects.LiveMigrateData
                                               ) -> None:
        executor.spawn(live_migration_dest.rollback_live_migration_at_destination,
                       self, context, instance, destroy_disks, migrate_data)

    def live_migration_abort(self, context: RequestContext, instance: objects.Instance,
                             migration_id: int) -> None:
        live_migration.abort(self, context, instance, migration_id)

    def live_migration_force_complete(self, context: RequestContext,
                                      instance: objects.Instance) -> None:
        live_migration.force_complete(self, context, instance)

    def evacuate_instance(self, context: RequestContext, instance: objects.Instance, node: str,
                          migration: objects.Migration, image: dict | None,
                          admin_password: str | None) -> None:
        executor.spawn(self._locked, evacuate.rebuild_evacuated, context, instance, node, migration,
                       image, admin_password)

    @periodic_task.periodic_task(spacing=60, run_immediately=False)
    def _poll_unconfirmed_resizes(self, context: RequestContext) -> None:
        """Confirm the resizes to this host older than ``resize_confirm_window``."""
        if CONF.resize_confirm_window > 0:
            resize.confirm_unconfirmed_resizes(self, context, CONF.resize_confirm_window)
