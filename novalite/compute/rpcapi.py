"""Client side of the compute RPC API: casts to one compute host."""
from __future__ import annotations

from typing import Any, Protocol

import oslo_messaging as messaging

from novalite import objects, rpc
from novalite.context import RequestContext

RPC_TOPIC = 'compute'
# Seconds a host has to tell its uptime (the API asks for each hypervisor it shows).
UPTIME_TIMEOUT = 10
# Seconds a host may take to pre-cache images or get ready for a live migration (Nova's
# long_rpc_timeout default), and within which each of its heartbeats must come.
CACHE_IMAGES_TIMEOUT = 1800
CACHE_IMAGES_HEARTBEAT = 60


class _Prepared(Protocol):
    """What ``RPCClient.prepare`` returns (oslo.messaging has no type information)."""

    def prepare(self, **kwargs: object) -> _Prepared: ...

    def cast(self, ctxt: RequestContext, method: str, **kwargs: object) -> None: ...

    # The answer is what the compute method returned, through the serializer.
    def call(self, ctxt: RequestContext, method: str, **kwargs: object) -> Any: ...


class ComputeAPI:
    """Messages to ``compute.<host>``; the transport is the one of the instance's cell
    when the context is targeted at a cell.

    API version history:

    * 1.0 - build_and_run_instance, terminate_instance
    * 1.1 - reboot_instance, stop_instance, start_instance, get_console_output
    * 1.2 - get_diagnostics, get_instance_diagnostics, external_instance_event
    * 1.3 - the server lifecycle: pause, suspend, rescue, password, crash dump,
      resize and migrations, rebuild, snapshot, shelve (each method says which)
    * 1.4 - attach_interface (a call), detach_interface, add_fixed_ip_to_instance,
      remove_fixed_ip_from_instance
    * 1.5 - set_host_enabled, host_maintenance_mode, host_power_action (calls)
    * 1.6 - cache_images (a call that may take long)
    * 1.7 - reserve_block_device_name (a call), attach_volume, detach_volume
    * 1.8 - swap_volume; rebuild_instance takes reimage_boot_volume
    * 1.9 - get_vnc_console, get_serial_console, validate_console_port (calls)
    * 1.10 - live migration: check_can_live_migrate_destination takes and answers a
      LiveMigrateData; check_can_live_migrate_source, pre_live_migration,
      post_live_migration_at_destination (calls), live_migration,
      rollback_live_migration_at_destination, live_migration_abort,
      live_migration_force_complete (casts)
    """

    VERSION = '1.10'

    def __init__(self) -> None:
        self.target = messaging.Target(topic=RPC_TOPIC, version='1.0')

    def _client(self, context: RequestContext, host: str | None,
                version: str = '1.0') -> _Prepared:
        transport = getattr(context, 'mq_connection', None)
        return rpc.get_shared_client(self.target, transport=transport).prepare(
            server=host, version=version)

    def build_and_run_instance(self, context: RequestContext, instance: objects.Instance, host: str,
                               image: dict | None, request_spec: objects.RequestSpec | None,
                               filter_properties: dict, admin_password: str | None = None,
                               injected_files: list | None = None,
                               requested_networks: list[dict] | None = None,
                               block_device_mapping: list | None = None, node: str | None = None,
                               limits: dict | None = None, host_list: list | None = None) -> None:
        self._client(context, host).cast(
            context, 'build_and_run_instance', instance=instance, image=image,
            request_spec=request_spec, filter_properties=filter_properties,
            admin_password=admin_password, injected_files=injected_files or [],
            requested_networks=requested_networks,
            block_device_mapping=block_device_mapping or [], node=node,
            limits=limits or {}, host_list=host_list or [])

    def terminate_instance(self, context: RequestContext, instance: objects.Instance,
                           bdms: list | None = None) -> None:
        self._client(context, instance.host).cast(
            context, 'terminate_instance', instance=instance, bdms=bdms or [])

    def reboot_instance(self, context: RequestContext, instance: objects.Instance,
                        reboot_type: str) -> None:
        """:param reboot_type: 'SOFT' or 'HARD'"""
        self._client(context, instance.host, '1.1').cast(
            context, 'reboot_instance', instance=instance, reboot_type=reboot_type)

    def stop_instance(self, context: RequestContext, instance: objects.Instance,
                      clean_shutdown: bool = True) -> None:
        self._client(context, instance.host, '1.1').cast(
            context, 'stop_instance', instance=instance, clean_shutdown=clean_shutdown)

    def start_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._client(context, instance.host, '1.1').cast(
            context, 'start_instance', instance=instance)

    def get_console_output(self, context: RequestContext, instance: objects.Instance,
                           tail_length: int | None) -> str:
        """:returns: the guest's console log (its last ``tail_length`` lines if given)"""
        return self._client(context, instance.host, '1.1').call(
            context, 'get_console_output', instance=instance, tail_length=tail_length)

    def get_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        """:returns: the driver's free-form diagnostics of the guest"""
        return self._client(context, instance.host, '1.2').call(
            context, 'get_diagnostics', instance=instance)

    def get_instance_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        """:returns: the guest's diagnostics in the standard format (API 2.48)"""
        return self._client(context, instance.host, '1.2').call(
            context, 'get_instance_diagnostics', instance=instance)

    def get_host_uptime(self, context: RequestContext, host: str) -> str:
        """:returns: the host's ``uptime`` line (1.3)"""
        return self._client(context, host, '1.3').prepare(timeout=UPTIME_TIMEOUT).call(
            context, 'get_host_uptime')

    # -- the host itself (1.5, os-hosts) -----------------------------------------------

    def set_host_enabled(self, context: RequestContext, host: str, enabled: bool) -> str:
        """:returns: ``enabled`` or ``disabled``"""
        return self._client(context, host, '1.5').call(
            context, 'set_host_enabled', enabled=enabled)

    def host_maintenance_mode(self, context: RequestContext, host_param: str, mode: bool,
                              host: str) -> str:
        """:returns: ``on_maintenance`` or ``off_maintenance``
        :raises NotImplementedError: the driver has no maintenance mode"""
        return self._client(context, host, '1.5').call(
            context, 'host_maintenance_mode', host=host_param, mode=mode)

    def host_power_action(self, context: RequestContext, host: str, action: str) -> str:
        """:param action: ``startup``, ``shutdown`` or ``reboot``
        :raises NotImplementedError: the driver cannot power its host"""
        return self._client(context, host, '1.5').call(
            context, 'host_power_action', action=action)

    def external_instance_event(self, context: RequestContext, instances: list, events: list,
                                host: str | None) -> None:
        """:param events: dicts with name, tag, status and server_uuid"""
        self._client(context, host, '1.2').cast(
            context, 'external_instance_event', instances=instances, events=events)

    # -- rebuild, snapshots, shelve (1.3) ------------------------------------------------

    def rebuild_instance(self, context: RequestContext, instance: objects.Instance, image: dict,
                         admin_password: str | None, injected_files: list,
                         preserve_ephemeral: bool = False,
                         reimage_boot_volume: bool = False) -> None:
        """Destroy the guest and spawn it again from ``image`` (a Glance image dict);
        with ``reimage_boot_volume`` (a volume-backed server, 2.93) Cinder writes the
        image onto the root volume first."""
        extra: dict[str, object] = {}
        version = '1.3'
        if reimage_boot_volume:
            extra['reimage_boot_volume'] = True
            version = '1.8'
        self._client(context, instance.host, version).cast(
            context, 'rebuild_instance', instance=instance, image=image,
            admin_password=admin_password, injected_files=injected_files,
            preserve_ephemeral=preserve_ephemeral, **extra)

    def snapshot_instance(self, context: RequestContext, instance: objects.Instance,
                          image_id: str) -> None:
        """Upload the root disk as the data of the queued image ``image_id``."""
        self._client(context, instance.host, '1.3').cast(
            context, 'snapshot_instance', instance=instance, image_id=image_id)

    def backup_instance(self, context: RequestContext, instance: objects.Instance, image_id: str,
                        backup_type: str, rotation: int) -> None:
        """A snapshot, then keep only the ``rotation`` newest backups of the type."""
        self._client(context, instance.host, '1.3').cast(
            context, 'backup_instance', instance=instance, image_id=image_id,
            backup_type=backup_type, rotation=rotation)

    def shelve_instance(self, context: RequestContext, instance: objects.Instance, image_id: str,
                        clean_shutdown: bool = True) -> None:
        self._client(context, instance.host, '1.3').cast(
            context, 'shelve_instance', instance=instance, image_id=image_id,
            clean_shutdown=clean_shutdown)

    def shelve_offload_instance(self, context: RequestContext, instance: objects.Instance,
                                clean_shutdown: bool = True) -> None:
        self._client(context, instance.host, '1.3').cast(
            context, 'shelve_offload_instance', instance=instance,
            clean_shutdown=clean_shutdown)

    def unshelve_instance(self, context: RequestContext, instance: objects.Instance, host: str,
                          image: dict | None = None, node: str | None = None) -> None:
        """Spawn a shelved-offloaded instance on ``host`` from its shelved ``image``
        (or power a shelved one on where it is, ``image`` None)."""
        self._client(context, host, '1.3').cast(
            context, 'unshelve_instance', instance=instance, image=image, node=node)

    # -- 1.3: in-place actions ---------------------------------------------------------

    def _cast_13(self, context: RequestContext, method: str, instance: objects.Instance,
                 **kwargs: object) -> None:
        self._client(context, instance.host, '1.3').cast(
            context, method, instance=instance, **kwargs)

    def pause_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'pause_instance', instance)

    def unpause_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'unpause_instance', instance)

    def suspend_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'suspend_instance', instance)

    def resume_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'resume_instance', instance)

    def rescue_instance(self, context: RequestContext, instance: objects.Instance,
                        rescue_password: str | None, rescue_image_ref: str | None = None,
                        clean_shutdown: bool = True) -> None:
        self._cast_13(context, 'rescue_instance', instance,
                      rescue_password=rescue_password, rescue_image_ref=rescue_image_ref,
                      clean_shutdown=clean_shutdown)

    def unrescue_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'unrescue_instance', instance)

    def set_admin_password(self, context: RequestContext, instance: objects.Instance,
                           new_pass: str) -> None:
        """A call, as in Nova: the API answers 409 when the guest cannot take it.

        :raises InstancePasswordSetFailed, InstanceAgentNotEnabled,
            SetAdminPasswdNotSupported, NotImplementedError:
        """
        self._client(context, instance.host, '1.3').call(
            context, 'set_admin_password', instance=instance, new_pass=new_pass)

    def trigger_crash_dump(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'trigger_crash_dump', instance)

    def soft_delete_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'soft_delete_instance', instance)

    def restore_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        self._cast_13(context, 'restore_instance', instance)

    # -- resize, migrations, evacuation (1.3) ------------------------------------------

    def prep_resize(self, context: RequestContext, instance: objects.Instance,
                    flavor: objects.Flavor, migration: objects.Migration, host: str, node: str,
                    clean_shutdown: bool = True) -> None:
        """To the destination: claim ``flavor`` there, then ask the source to send
        the instance."""
        self._client(context, host, '1.3').cast(
            context, 'prep_resize', instance=instance, flavor=flavor, migration=migration,
            node=node, clean_shutdown=clean_shutdown)

    def resize_instance(self, context: RequestContext, instance: objects.Instance,
                        migration: objects.Migration, flavor: objects.Flavor,
                        clean_shutdown: bool = True) -> None:
        """To the source: stop the guest and hand its disks to the destination."""
        self._client(context, migration.source_compute, '1.3').cast(
            context, 'resize_instance', instance=instance, migration=migration,
            flavor=flavor, clean_shutdown=clean_shutdown)

    def finish_resize(self, context: RequestContext, instance: objects.Instance,
                      migration: objects.Migration, disk_info: dict) -> None:
        """To the destination: make and start the guest with the new flavor."""
        self._client(context, migration.dest_compute, '1.3').cast(
            context, 'finish_resize', instance=instance, migration=migration,
            disk_info=disk_info)

    def confirm_resize(self, context: RequestContext, instance: objects.Instance,
                       migration: objects.Migration) -> None:
        """To the source: drop what the resize kept there."""
        self._client(context, migration.source_compute, '1.3').cast(
            context, 'confirm_resize', instance=instance, migration=migration)

    def revert_resize(self, context: RequestContext, instance: objects.Instance,
                      migration: objects.Migration) -> None:
        """To the destination: remove the new guest, then hand back to the source."""
        self._client(context, migration.dest_compute, '1.3').cast(
            context, 'revert_resize', instance=instance, migration=migration)

    def finish_revert_resize(self, context: RequestContext, instance: objects.Instance,
                             migration: objects.Migration) -> None:
        """To the source: restore the old flavor, disks and guest."""
        self._client(context, migration.source_compute, '1.3').cast(
            context, 'finish_revert_resize', instance=instance, migration=migration)

    # -- live migration (1.10; flows in compute/live_migration*.py) ---------------------

    def check_can_live_migrate_destination(self, context: RequestContext,
                                           instance: objects.Instance, host: str,
                                           block_migration: bool | None,
                                           migration: objects.Migration
                                           ) -> objects.LiveMigrateData:
        """A call to the destination, which asks the source in turn.

        :raises MigrationPreCheckError: either host refuses
        """
        return self._client(context, host, '1.10').call(
            context, 'check_can_live_migrate_destination', instance=instance,
            block_migration=block_migration, migration=migration)

    def check_can_live_migrate_source(self, context: RequestContext,
                                      instance: objects.Instance,
                                      migrate_data: objects.LiveMigrateData
                                      ) -> objects.LiveMigrateData:
        """A call from the destination to the source (the instance's host)."""
        return self._client(context, instance.host, '1.10').call(
            context, 'check_can_live_migrate_source', instance=instance,
            migrate_data=migrate_data)

    def live_migration(self, context: RequestContext, instance: objects.Instance, dest: str,
                       block_migration: bool, migration: objects.Migration,
                       migrate_data: objects.LiveMigrateData) -> None:
        """To the source: queue the migration and run it."""
        self._client(context, instance.host, '1.10').cast(
            context, 'live_migration', instance=instance, dest=dest,
            block_migration=block_migration, migration=migration, migrate_data=migrate_data)

    def pre_live_migration(self, context: RequestContext, instance: objects.Instance,
                           host: str, migrate_data: objects.LiveMigrateData
                           ) -> objects.LiveMigrateData:
        """A call from the source to the destination: get ready to receive."""
        return self._client(context, host, '1.10').prepare(
            timeout=CACHE_IMAGES_TIMEOUT, call_monitor_timeout=CACHE_IMAGES_HEARTBEAT).call(
            context, 'pre_live_migration', instance=instance, migrate_data=migrate_data)

    def post_live_migration_at_destination(self, context: RequestContext,
                                           instance: objects.Instance, host: str,
                                           block_migration: bool,
                                           migrate_data: objects.LiveMigrateData) -> None:
        """A call from the source to the destination: the guest runs there, the
        instance becomes the destination's."""
        self._client(context, host, '1.10').prepare(
            timeout=CACHE_IMAGES_TIMEOUT, call_monitor_timeout=CACHE_IMAGES_HEARTBEAT).call(
            context, 'post_live_migration_at_destination', instance=instance,
            block_migration=block_migration, migrate_data=migrate_data)

    def rollback_live_migration_at_destination(self, context: RequestContext,
                                               instance: objects.Instance, host: str,
                                               destroy_disks: bool,
                                               migrate_data: objects.LiveMigrateData
                                               ) -> None:
        """From the source to the destination of a failed migration: remove what
        was made there."""
        self._client(context, host, '1.10').cast(
            context, 'rollback_live_migration_at_destination', instance=instance,
            destroy_disks=destroy_disks, migrate_data=migrate_data)

    def live_migration_abort(self, context: RequestContext, instance: objects.Instance,
                             migration_id: int) -> None:
        """To the source: abort the migration (queued or running)."""
        self._client(context, instance.host, '1.10').cast(
            context, 'live_migration_abort', instance=instance, migration_id=migration_id)

    def live_migration_force_complete(self, context: RequestContext,
                                      instance: objects.Instance) -> None:
        """To the source: make the running migration converge now."""
        self._client(context, instance.host, '1.10').cast(
            context, 'live_migration_force_complete', instance=instance)

    def evacuate_instance(self, context: RequestContext, instance: objects.Instance, host: str,
                          node: str, migration: objects.Migration, image: dict | None,
                          admin_password: str | None) -> None:
        """To the chosen host: build the evacuated instance there again."""
        self._client(context, host, '1.3').cast(
            context, 'evacuate_instance', instance=instance, node=node, migration=migration,
            image=image, admin_password=admin_password)

    # -- network interfaces and fixed IPs (1.4) ----------------------------------------

    def attach_interface(self, context: RequestContext, instance: objects.Instance,
                         network_id: str | None, port_id: str | None, requested_ip: str | None,
                         tag: str | None = None) -> dict:
        """A call, as in Nova: the host makes (or takes) and binds the port and adds
        the NIC, and answers with the VIF.

        :raises PortNotFound, NetworkNotFound, PortInUse, FixedIpAlreadyInUse,
            AttachInterfaceNotSupported, InterfaceAttachFailed, ...:
        """
        return self._client(context, instance.host, '1.4').call(
            context, 'attach_interface', instance=instance, network_id=network_id,
            port_id=port_id, requested_ip=requested_ip, tag=tag)

    def detach_interface(self, context: RequestContext, instance: objects.Instance,
                         port_id: str) -> None:
        self._client(context, instance.host, '1.4').cast(
            context, 'detach_interface', instance=instance, port_id=port_id)

    def add_fixed_ip_to_instance(self, context: RequestContext, instance: objects.Instance,
                                 network_id: str) -> None:
        self._client(context, instance.host, '1.4').cast(
            context, 'add_fixed_ip_to_instance', instance=instance, network_id=network_id)

    def remove_fixed_ip_from_instance(self, context: RequestContext, instance: objects.Instance,
                                      address: str) -> None:
        self._client(context, instance.host, '1.4').cast(
            context, 'remove_fixed_ip_from_instance', instance=instance, address=address)

    # -- image pre-caching (1.6, os-aggregates/{id}/images) -----------------------------

    def cache_images(self, context: RequestContext, host: str,
                     image_ids: list[str]) -> dict[str, str]:
        """A call: the host downloads each image into its cache before it answers,
        which may take long; the host's heartbeats (oslo.messaging's call monitor)
        tell that it is still at it.

        :returns: per image ``cached``, ``existing``, ``unsupported`` or ``error``
        """
        return self._client(context, host, '1.6').prepare(
            timeout=CACHE_IMAGES_TIMEOUT, call_monitor_timeout=CACHE_IMAGES_HEARTBEAT
        ).call(context, 'cache_images', image_ids=image_ids)

    # -- volumes (1.7, os-volume_attachments) -------------------------------------------

    def reserve_block_device_name(self, context: RequestContext, instance: objects.Instance,
                                  device: str | None, volume_id: str,
                                  disk_bus: str | None = None, device_type: str | None = None,
                                  tag: str | None = None,
                                  delete_on_termination: bool = False
                                  ) -> objects.BlockDeviceMapping:
        """A call: the host chooses the device under the instance's lock and makes the
        volume's mapping, which it answers with."""
        return self._client(context, instance.host, '1.7').call(
            context, 'reserve_block_device_name', instance=instance, device=device,
            volume_id=volume_id, disk_bus=disk_bus, device_type=device_type, tag=tag,
            delete_on_termination=delete_on_termination)

    def attach_volume(self, context: RequestContext, instance: objects.Instance,
                      bdm: objects.BlockDeviceMapping) -> None:
        self._client(context, instance.host, '1.7').cast(
            context, 'attach_volume', instance=instance, bdm=bdm)

    def detach_volume(self, context: RequestContext, instance: objects.Instance,
                      volume_id: str, attachment_id: str | None = None) -> None:
        self._client(context, instance.host, '1.7').cast(
            context, 'detach_volume', instance=instance, volume_id=volume_id,
            attachment_id=attachment_id)

    def swap_volume(self, context: RequestContext, instance: objects.Instance,
                    old_volume_id: str, new_volume_id: str, new_attachment_id: str) -> None:
        """Move the guest's disk from one volume to another (the API has begun
        detaching the old one and made ``new_attachment_id`` for the new one)."""
        self._client(context, instance.host, '1.8').cast(
            context, 'swap_volume', instance=instance, old_volume_id=old_volume_id,
            new_volume_id=new_volume_id, new_attachment_id=new_attachment_id)

    # -- consoles (1.9) ------------------------------------------------------------------

    def get_vnc_console(self, context: RequestContext, instance: objects.Instance,
                        console_type: str) -> dict:
        """A call: the host authorizes a console token and answers with the access URL
        and connection info (``token``, ``access_url``, ``host``, ``port``...)."""
        return self._client(context, instance.host, '1.9').call(
            context, 'get_vnc_console', instance=instance, console_type=console_type)

    def get_serial_console(self, context: RequestContext, instance: objects.Instance,
                           console_type: str) -> dict:
        return self._client(context, instance.host, '1.9').call(
            context, 'get_serial_console', instance=instance, console_type=console_type)

    def validate_console_port(self, context: RequestContext, instance: objects.Instance,
                              port: int, console_type: str) -> bool:
        """A call from a console proxy: is ``port`` still this guest's console?"""
        return self._client(context, instance.host, '1.9').call(
            context, 'validate_console_port', instance=instance, port=port,
            console_type=console_type)
