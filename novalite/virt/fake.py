"""An in-memory hypervisor for tests and the all-in-one stack."""
from __future__ import annotations

import json
import os
import platform
import socket
import socketserver
import struct
import sys
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import exception, executor, objects
from novalite.compute import power_state, task_states
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.image import glance
from novalite.network.model import VIF, NetworkInfo
from novalite.virt import diagnostics, driver, fake_migration, hardware

LOG = logging.getLogger(__name__)

if TYPE_CHECKING:
    from novalite.compute.instance_events import ComputeVirtAPI

GiB = 1024 ** 3
_CLUSTER_BITS = 16
_CLUSTER = 1 << _CLUSTER_BITS


def snapshot_format(instance: objects.Instance) -> str:
    """The format of a fake guest's disk: its image's if qcow2, else raw (the two
    formats a libvirt snapshot comes out in)."""
    image_format = (instance.system_metadata or {}).get('image_disk_format')
    return 'qcow2' if image_format == 'qcow2' else 'raw'


def empty_qcow2(virtual_size: int) -> bytes:
    """A valid, empty qcow2 (version 2) image of ``virtual_size`` bytes: the header
    cluster, the refcount table, one refcount block and the L1 table, as ``qemu-img
    create`` lays them out."""
    l2_span = _CLUSTER * (_CLUSTER // 8)
    l1_size = max(1, -(-virtual_size // l2_span))
    if l1_size * 8 > _CLUSTER:
        raise ValueError('virtual size %d too large for a one-cluster L1 table'
                         % virtual_size)
    header = struct.pack('>4sIQIIQIIQQIIQ', b'QFI\xfb', 2, 0, 0, _CLUSTER_BITS,
                         virtual_size, 0, l1_size, 3 * _CLUSTER, _CLUSTER, 1, 0, 0)
    refcount_table = struct.pack('>Q', 2 * _CLUSTER)
    # Clusters 0-3 (header, refcount table, refcount block, L1) are in use once each.
    refcount_block = struct.pack('>4H', 1, 1, 1, 1)
    return b''.join((header.ljust(_CLUSTER, b'\0'),
                     refcount_table.ljust(_CLUSTER, b'\0'),
                     refcount_block.ljust(_CLUSTER, b'\0'),
                     b'\0' * (l1_size * 8)))


VNC_BANNER = b'RFB 003.008\n'
SERIAL_BANNER = b'fake serial console\r\n'
# Power states in which a guest shows a console.
_CONSOLE_STATES = (power_state.RUNNING, power_state.PAUSED)


class _EchoHandler(socketserver.BaseRequestHandler):
    """Sends the console's banner, then echoes what the client sends."""

    server: ConsoleServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        self.server.opened(sock)
        try:
            sock.sendall(self.server.banner)
            while data := sock.recv(4096):
                sock.sendall(data)
        except OSError:
            pass  # the guest's console closed under the client
        finally:
            self.server.closed(sock)


class ConsoleServer(socketserver.ThreadingTCPServer):
    """A fake guest's console: a TCP listener on 127.0.0.1 (a free port), each client
    served on a daemon thread; ``close`` ends the listener and every connection."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, name: str, banner: bytes) -> None:
        super().__init__(('127.0.0.1', 0), _EchoHandler)
        self.banner = banner
        self.port: int = self.server_address[1]
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        executor.start_thread(name, self.serve_forever, 0.1)

    def opened(self, sock: socket.socket) -> None:
        with self._clients_lock:
            self._clients.add(sock)

    def closed(self, sock: socket.socket) -> None:
        with self._clients_lock:
            self._clients.discard(sock)

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        with self._clients_lock:
            clients, self._clients = self._clients, set()
        for sock in clients:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class FakeDriver(driver.ComputeDriver):
    """Keeps guests in a dict; its host size comes from the ``[fake_driver]`` options.

    ``[fake_driver] fail_spawn_on_hosts`` makes spawn fail on the named hosts, so tests
    can exercise reschedules. Power operations only change the recorded state; a test
    that needs one to fail replaces the method on its driver. Volumes are recorded per
    guest (mountpoint -> connection info, see ``volumes``); the volume ids in
    ``fail_attach_volume_ids`` and ``fail_detach_volume_ids`` make attach_volume and
    detach_volume fail as a hypervisor would. A live migration copies the guest at
    ``live_migration_mb_per_second`` (``fake_migration``); the hosts in
    ``fail_live_migration_precheck_on_hosts`` refuse to take guests, and migrations to
    those in ``fail_live_migration_on_hosts`` fail half-way.
    """

    capabilities = dict(driver.ComputeDriver.capabilities, supports_reboot=True,
                        supports_pause=True, supports_suspend=True,
                        supports_console_output=True, supports_attach_interface=True,
                        supports_tagged_attach_interface=True)

    def __init__(self, virtapi: ComputeVirtAPI | None = None) -> None:
        super().__init__(virtapi)
        self._instances: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._host: str | None = None
        # Images pre-cached by request (cache_image).
        self.cached_images: set[str] = set()
        # Fault injection: volumes whose attach (detach) fails.
        self.fail_attach_volume_ids: set[str] = set()
        self.fail_detach_volume_ids: set[str] = set()
        # (instance uuid, 'vnc' | 'serial') -> the guest's console listener.
        self.consoles: dict[tuple[str, str], ConsoleServer] = {}
        # The live migrations this host runs as their source.
        self.live_migrations = fake_migration.LiveMigrations()

    def init_host(self, host: str) -> None:
        self._host = host

    def cleanup_host(self, host: str) -> None:
        with self._lock:
            servers, self.consoles = list(self.consoles.values()), {}
        for server in servers:
            server.close()

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        return [self._host or CONF.host]

    def get_available_resource(self, nodename: str) -> dict[str, Any]:
        with self._lock:
            guests = list(self._instances.values())
        return {
            'vcpus': CONF.fake_driver.vcpus,
            'memory_mb': CONF.fake_driver.memory_mb,
            'local_gb': CONF.fake_driver.local_gb,
            'vcpus_used': sum(g['vcpus'] for g in guests),
            'memory_mb_used': sum(g['memory_mb'] for g in guests),
            'local_gb_used': sum(g['disk_gb'] for g in guests),
            'hypervisor_type': 'fake',
            'hypervisor_version': 1000,
            'hypervisor_hostname': nodename,
            'cpu_info': json.dumps({'arch': 'x86_64', 'model': 'fake'}),
            'disk_available_least': CONF.fake_driver.local_gb,
            'supported_instances': [['x86_64', 'fake', 'hvm']],
        }

    def get_host_uptime(self) -> str:
        return hardware.host_uptime()

    def host_power_action(self, action: str) -> str:
        return action

    def host_maintenance_mode(self, host: str, mode: bool) -> str:
        return 'on_maintenance' if mode else 'off_maintenance'

    def set_host_enabled(self, enabled: bool) -> str:
        return 'enabled' if enabled else 'disabled'

    def list_instance_uuids(self) -> list[str]:
        with self._lock:
            return list(self._instances)

    def spawn(self, context: RequestContext, instance: objects.Instance,
              image_meta: objects.ImageMeta | None, injected_files: list,
              admin_password: str | None, allocations: dict,
              network_info: NetworkInfo | None = None,
              block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        if self._host in CONF.fake_driver.fail_spawn_on_hosts:
            raise exception.ComputeResourcesUnavailable(
                reason='fake driver told to fail spawn on host %s' % self._host)
        if CONF.fake_driver.spawn_seconds:
            time.sleep(CONF.fake_driver.spawn_seconds)
        guest = _guest_record(instance, power_state.RUNNING, network_info, block_device_info)
        with self._lock:
            self._instances[instance.uuid] = guest

    def destroy(self, context: RequestContext, instance: objects.Instance,
                network_info: NetworkInfo | None = None,
                block_device_info: driver.BlockDeviceInfo | None = None,
                destroy_disks: bool = True) -> None:
        with self._lock:
            self._instances.pop(instance.uuid, None)
        self._close_consoles(instance.uuid)

    def get_info(self, instance: objects.Instance) -> hardware.InstanceInfo:
        with self._lock:
            guest = self._instances.get(instance.uuid)
        if guest is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return hardware.InstanceInfo(state=guest['state'], internal_id=instance.uuid)

    def _set_state(self, instance: objects.Instance, state: int) -> None:
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            guest['state'] = state
        if state not in _CONSOLE_STATES:
            self._close_consoles(instance.uuid)

    def reboot(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None = None, reboot_type: str = 'SOFT',
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        self._set_state(instance, power_state.RUNNING)

    def power_off(self, instance: objects.Instance, timeout: int = 0,
                  retry_interval: int = 0) -> None:
        self._set_state(instance, power_state.SHUTDOWN)

    def power_on(self, context: RequestContext, instance: objects.Instance,
                 network_info: NetworkInfo | None = None,
                 block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        self._set_state(instance, power_state.RUNNING)

    def get_console_output(self, context: RequestContext, instance: objects.Instance) -> str:
        self.get_info(instance)
        return ('fake console of instance %s\nbooting\nlogin: ' % instance.uuid)

    # -- consoles: a real TCP listener per running guest, for the proxies' tests ---------

    def get_vnc_console(self, context: RequestContext, instance: objects.Instance
                        ) -> driver.ConsoleVNC:
        """A listener that greets as a VNC server (``VNC_BANNER``), then echoes."""
        return driver.ConsoleVNC(host='127.0.0.1',
                                 port=self._console(instance, 'vnc', VNC_BANNER))

    def get_serial_console(self, context: RequestContext, instance: objects.Instance
                           ) -> driver.ConsoleSerial:
        """A listener that prints ``SERIAL_BANNER``, then echoes."""
        return driver.ConsoleSerial(host='127.0.0.1',
                                    port=self._console(instance, 'serial', SERIAL_BANNER))

    def _console(self, instance: objects.Instance, kind: str, banner: bytes) -> int:
        """The port of the guest's ``kind`` console, started on first use.

        :raises InstanceNotFound: no such guest here
        :raises ConsoleNotAvailable: the guest is not running
        """
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            if guest['state'] not in _CONSOLE_STATES:
                raise exception.ConsoleNotAvailable()
            server = self.consoles.get((instance.uuid, kind))
            if server is None:
                server = ConsoleServer('fake-%s-console-%s' % (kind, instance.uuid), banner)
                self.consoles[(instance.uuid, kind)] = server
            return server.port

    def _close_consoles(self, instance_uuid: str) -> None:
        with self._lock:
            servers = [self.consoles.pop(key) for key in list(self.consoles)
                       if key[0] == instance_uuid]
        for server in servers:
            server.close()

    def get_instance_diagnostics(self, instance: objects.Instance) -> dict[str, Any]:
        """Made-up but well-formed figures: one vCPU entry per flavor vCPU, one disk."""
        info = self.get_info(instance)
        flavor = instance.flavor
        diags = diagnostics.new(
            state=power_state.STATE_MAP.get(info.state, 'nostate'), driver='libvirt',
            hypervisor='fake', hypervisor_os='fake', uptime=0,
            config_drive=bool(instance.config_drive), memory_maximum_mb=flavor.memory_mb,
            memory_used_mb=0)
        for cpu in range(flavor.vcpus):
            diagnostics.add_cpu(diags, id=cpu, time=0, utilisation=None)
        diagnostics.add_disk(diags, read_bytes=0, read_requests=0, write_bytes=0,
                             write_requests=0, errors_count=0)
        return diags

    def snapshot(self, context: RequestContext, instance: objects.Instance, image_id: str,
                 update_task_state: driver.UpdateTaskState) -> None:
        """Upload a stand-in for the guest's root disk, in the format a real driver's
        snapshot would have (qcow2 for a qcow2 image, else raw), and say so in the
        image's ``disk_format``: Glance refuses data that its format inspection finds
        to be something else than the image claims (415)."""
        self.get_info(instance)
        update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
        disk_format = snapshot_format(instance)
        fd, path = tempfile.mkstemp(prefix='fake-snapshot-')
        try:
            with os.fdopen(fd, 'wb') as data:
                if disk_format == 'qcow2':
                    data.write(empty_qcow2(max(instance.flavor.root_gb, 1) * GiB))
                else:
                    data.write(('fake snapshot of instance %s\n'
                                % instance.uuid).encode())
            update_task_state(task_state=task_states.IMAGE_UPLOADING,
                              expected_state=task_states.IMAGE_PENDING_UPLOAD)
            image_api = glance.API()
            image_api.update(context, image_id, {'disk_format': disk_format,
                                                 'container_format': 'bare'})
            image_api.upload(context, image_id, path)
        finally:
            os.unlink(path)

    def cache_image(self, context: RequestContext, image_id: str) -> bool:
        """Records the image as cached (the fake host downloads nothing)."""
        with self._lock:
            if image_id in self.cached_images:
                return False
            self.cached_images.add(image_id)
            return True

    # -- resize and migrations ----------------------------------------------------------

    def migrate_disk_and_power_off(self, context: RequestContext, instance: objects.Instance,
                                   dest: str, flavor: objects.Flavor,
                                   network_info: NetworkInfo | None = None,
                                   block_device_info: driver.BlockDeviceInfo | None = None,
                                   timeout: int = 0, retry_interval: int = 0) -> dict:
        if flavor.root_gb < instance.flavor.root_gb:
            raise exception.CannotResizeDisk(reason='Unable to resize disk down.')
        self._set_state(instance, power_state.SHUTDOWN)
        return {'source_host': self._host}

    def _put(self, instance: objects.Instance, running: bool,
             block_device_info: driver.BlockDeviceInfo | None) -> None:
        guest = _guest_record(instance,
                              power_state.RUNNING if running else power_state.SHUTDOWN,
                              None, block_device_info)
        with self._lock:
            old = self._instances.get(instance.uuid, {})
            guest['interfaces'] = old.get('interfaces', [])
            guest['volumes'] = guest['volumes'] or old.get('volumes', {})
            self._instances[instance.uuid] = guest

    def finish_migration(self, context: RequestContext, migration: objects.Migration,
                         instance: objects.Instance, disk_info: dict, network_info: NetworkInfo,
                         image_meta: objects.ImageMeta | None, resize_instance: bool,
                         allocations: dict, block_device_info: driver.BlockDeviceInfo | None = None,
                         power_on: bool = True) -> None:
        self._put(instance, power_on, block_device_info)

    def confirm_migration(self, context: RequestContext, migration: objects.Migration,
                          instance: objects.Instance,
                          network_info: NetworkInfo | None = None) -> None:
        if migration.source_compute != migration.dest_compute:
            with self._lock:
                self._instances.pop(instance.uuid, None)
            self._close_consoles(instance.uuid)

    def finish_revert_migration(self, context: RequestContext, instance: objects.Instance,
                                network_info: NetworkInfo, migration: objects.Migration,
                                block_device_info: driver.BlockDeviceInfo | None = None,
                                power_on: bool = True) -> None:
        self._put(instance, power_on, block_device_info)

    # -- live migration: a guest passes from one driver to another only through the
    # compute flows (in devstack the two are different processes): pre_live_migration
    # records it coming in on the destination, post_live_migration_at_destination makes
    # it the destination's, post_live_migration_at_source drops it here -----------------

    def check_can_live_migrate_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           block_migration: bool | None,
                                           migrate_data: objects.LiveMigrateData
                                           ) -> objects.LiveMigrateData:
        host = self._host or CONF.host
        if host in CONF.fake_driver.fail_live_migration_precheck_on_hosts:
            raise exception.MigrationPreCheckError(
                reason='fake driver told to refuse live migrations to host %s' % host)
        migrate_data.dest_host = host
        migrate_data.target_connect_addr = CONF.my_ip
        migrate_data.is_shared_instance_path = False
        migrate_data.block_migration = block_migration
        return migrate_data

    def check_can_live_migrate_source(self, context: RequestContext,
                                      instance: objects.Instance,
                                      migrate_data: objects.LiveMigrateData
                                      ) -> objects.LiveMigrateData:
        """Only a running or paused guest moves live; fake hosts share no storage, so
        a guest with a local disk moves it (block migration), one without (booted from
        a volume, no ephemeral disk) need not."""
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None or guest.get('migrating_in'):
                raise exception.MigrationPreCheckError(
                    reason='instance %s has no guest on host %s' % (instance.uuid, self._host))
            state, local_gb, volumes = guest['state'], guest['disk_gb'], guest['volumes']
        if state not in (power_state.RUNNING, power_state.PAUSED):
            raise exception.MigrationPreCheckError(
                reason='the guest of instance %s is %s: only a running or paused guest '
                       'can be live-migrated'
                       % (instance.uuid, power_state.STATE_MAP.get(state, state)))
        migrate_data.is_shared_block_storage = not local_gb and bool(volumes)
        if migrate_data.block_migration is None:
            migrate_data.block_migration = not migrate_data.is_shared_block_storage
        return migrate_data

    def pre_live_migration(self, context: RequestContext, instance: objects.Instance,
                           network_info: NetworkInfo,
                           block_device_info: driver.BlockDeviceInfo | None,
                           migrate_data: objects.LiveMigrateData
                           ) -> objects.LiveMigrateData:
        """Record the guest coming in, paused until it is handed over."""
        incoming = _guest_record(instance, power_state.PAUSED, network_info,
                                 block_device_info)
        incoming['migrating_in'] = True
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is not None and not guest.get('migrating_in'):
                raise exception.MigrationError(
                    reason='instance %s already has a guest on host %s'
                    % (instance.uuid, self._host))
            self._instances[instance.uuid] = incoming
        return migrate_data

    def live_migration(self, context: RequestContext, instance: objects.Instance, dest: str,
                       post_method: driver.PostMethod, recover_method: driver.RecoverMethod,
                       block_migration: bool,
                       migrate_data: objects.LiveMigrateData) -> None:
        """Copy the guest's memory (and root disk) to ``dest`` on this thread (see
        ``fake_migration``), then call ``post_method`` or ``recover_method``. The
        destination's driver is not touched: the compute flows tell it."""
        with self._lock:
            guest = self._instances.get(instance.uuid)
            memory_mb = guest['memory_mb'] if guest else 0
            disk_gb = guest['root_gb'] if guest and block_migration else 0
        if guest is None:
            recover_method(context, instance, dest, migrate_data,
                           error=exception.InstanceNotFound(instance_id=instance.uuid),
                           migration_status='error')
            return
        job = fake_migration.CopyJob.for_guest(memory_mb=memory_mb, disk_gb=disk_gb, dest=dest)
        self.live_migrations.migrate(
            context, instance, dest, post_method, recover_method, block_migration,
            migrate_data, job, pause=lambda: self._set_state(instance, power_state.PAUSED))

    def live_migration_abort(self, instance: objects.Instance) -> None:
        self.live_migrations.running(instance).abort()

    def live_migration_force_complete(self, instance: objects.Instance) -> None:
        """:raises MigrationError: no live migration of the instance runs here"""
        self.live_migrations.running(instance).force_complete()

    def post_live_migration_at_source(self, context: RequestContext,
                                      instance: objects.Instance, network_info: NetworkInfo,
                                      block_device_info: driver.BlockDeviceInfo | None,
                                      migrate_data: objects.LiveMigrateData) -> None:
        with self._lock:
            self._instances.pop(instance.uuid, None)
        self._close_consoles(instance.uuid)

    def post_live_migration_at_destination(self, context: RequestContext,
                                           instance: objects.Instance,
                                           network_info: NetworkInfo,
                                           block_migration: bool,
                                           block_device_info: driver.BlockDeviceInfo | None
                                           ) -> None:
        """The guest that came in runs and is this host's (made from the instance if
        this driver lost it since ``pre_live_migration``)."""
        guest = _guest_record(instance, power_state.RUNNING, network_info,
                              block_device_info)
        with self._lock:
            incoming = self._instances.get(instance.uuid, {})
            if not network_info:
                guest['interfaces'] = incoming.get('interfaces', [])
            if not guest['volumes']:
                guest['volumes'] = incoming.get('volumes', {})
            self._instances[instance.uuid] = guest

    def rollback_live_migration_at_destination(self, context: RequestContext,
                                               instance: objects.Instance,
                                               network_info: NetworkInfo,
                                               block_device_info: driver.BlockDeviceInfo | None,
                                               destroy_disks: bool,
                                               migrate_data: objects.LiveMigrateData
                                               ) -> None:
        """Drop the guest that was coming in (a guest of this host's own stays)."""
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None or not guest.get('migrating_in'):
                return
            del self._instances[instance.uuid]
        self._close_consoles(instance.uuid)

    # -- in-place actions ------------------------------------------------------------------

    def pause(self, instance: objects.Instance) -> None:
        self._set_state(instance, power_state.PAUSED)

    def unpause(self, instance: objects.Instance) -> None:
        self._set_state(instance, power_state.RUNNING)

    def suspend(self, context: RequestContext, instance: objects.Instance) -> None:
        self._set_state(instance, power_state.SUSPENDED)

    def resume(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None = None,
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        self._set_state(instance, power_state.RUNNING)

    def rescue(self, context: RequestContext, instance: objects.Instance,
               network_info: NetworkInfo | None, image_meta: objects.ImageMeta,
               rescue_password: str | None,
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            guest['rescue_image'] = getattr(image_meta, 'id', None)
            guest['state'] = power_state.RUNNING

    def unrescue(self, context: RequestContext, instance: objects.Instance) -> None:
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            guest.pop('rescue_image', None)
            guest['state'] = power_state.RUNNING

    def set_admin_password(self, instance: objects.Instance, new_pass: str) -> None:
        """Keeps the password, so tests can see it arrived."""
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            guest['admin_password'] = new_pass

    def trigger_crash_dump(self, instance: objects.Instance) -> None:
        self.get_info(instance)

    # -- network interfaces: the guest's NICs are its list of port ids ------------------

    def attach_interface(self, context: RequestContext, instance: objects.Instance,
                         image_meta: objects.ImageMeta | None, vif: VIF) -> None:
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            nics = guest.setdefault('interfaces', [])
            if vif['id'] in nics:
                raise exception.InterfaceAttachFailed(instance_uuid=instance.uuid)
            nics.append(vif['id'])

    def detach_interface(self, context: RequestContext, instance: objects.Instance,
                         vif: VIF) -> None:
        with self._lock:
            guest = self._instances.get(instance.uuid)
            if guest is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            nics = guest.get('interfaces', [])
            if vif['id'] in nics:
                nics.remove(vif['id'])

    def interfaces(self, instance: objects.Instance) -> list[str]:
        """The port ids of the guest's NICs (for tests)."""
        with self._lock:
            return list(self._instances.get(instance.uuid, {}).get('interfaces', []))

    # -- volumes: the guest's disks are its mountpoint -> connection info record --------

    def get_volume_connector(self, instance: objects.Instance) -> dict[str, Any]:
        """A fixed connector for this host, as Nova's fake driver gives (no os-brick)."""
        return {'host': self._host or CONF.host, 'ip': CONF.my_ip, 'initiator': 'fake',
                'platform': platform.machine(), 'os_type': sys.platform,
                'multipath': False, 'do_local_attach': False}

    def _guest(self, instance: objects.Instance) -> dict[str, Any]:
        guest = self._instances.get(instance.uuid)
        if guest is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return guest

    def attach_volume(self, context: RequestContext, connection_info: driver.ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      disk_bus: str | None = None, device_type: str | None = None,
                      encryption: dict[str, Any] | None = None) -> None:
        vol_id = _volume_id(connection_info)
        with self._lock:
            volumes = self._guest(instance).setdefault('volumes', {})
            if vol_id in self.fail_attach_volume_ids:
                raise exception.VolumeAttachFailed(
                    volume_id=vol_id, reason='fake driver told to fail its attach')
            present = volumes.get(mountpoint)
            if present is not None and _volume_id(present) != vol_id:
                raise exception.VolumeAttachFailed(
                    volume_id=vol_id, reason='the guest already has volume %s at %s'
                    % (_volume_id(present), mountpoint))
            volumes[mountpoint] = connection_info

    def detach_volume(self, context: RequestContext, connection_info: driver.ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      encryption: dict[str, Any] | None = None) -> None:
        vol_id = _volume_id(connection_info)
        with self._lock:
            if vol_id in self.fail_detach_volume_ids:
                raise exception.DeviceDetachFailed(
                    device=mountpoint, reason='fake driver told to fail its detach')
            guest = self._instances.get(instance.uuid)
            if guest is None or guest.get('volumes', {}).pop(mountpoint, None) is None:
                LOG.info('Fake guest %s has no volume at %s: detached already',
                         instance.uuid, mountpoint)

    def swap_volume(self, context: RequestContext, old_connection_info: driver.ConnectionInfo,
                    new_connection_info: driver.ConnectionInfo, instance: objects.Instance,
                    mountpoint: str, resize_to: int) -> None:
        with self._lock:
            volumes = self._guest(instance).setdefault('volumes', {})
            if mountpoint not in volumes:
                raise exception.VolumeBDMPathNotFound(path=mountpoint)
            volumes[mountpoint] = new_connection_info

    def volumes(self, instance_uuid: str) -> dict[str, driver.ConnectionInfo]:
        """The guest's volumes, mountpoint -> connection info (for tests)."""
        with self._lock:
            return dict(self._instances.get(instance_uuid, {}).get('volumes', {}))


def _volume_id(connection_info: driver.ConnectionInfo) -> str:
    data = connection_info.get('data') or {}
    return connection_info.get('serial') or data.get('volume_id') or ''


def _boots_from_volume(block_device_info: driver.BlockDeviceInfo | None) -> bool:
    return any(bdm.get('boot_index') == 0
               for bdm in (block_device_info or {}).get('block_device_mapping') or [])


def _mapped_volumes(block_device_info: driver.BlockDeviceInfo | None
                    ) -> dict[str, driver.ConnectionInfo]:
    """mountpoint -> connection info of the mapped volumes (the root at the root
    device name when its mapping names none)."""
    info = block_device_info or {}
    root = info.get('root_device_name') or '/dev/vda'
    volumes = {}
    for bdm in info.get('block_device_mapping') or []:
        mountpoint = bdm.get('mount_device') or (root if bdm.get('boot_index') == 0 else None)
        if mountpoint:
            volumes[mountpoint] = bdm['connection_info']
    return volumes


def _guest_record(instance: objects.Instance, state: int, network_info: NetworkInfo | None,
                  block_device_info: driver.BlockDeviceInfo | None) -> dict[str, Any]:
    """A guest of ``instance``'s flavor, as the driver keeps it."""
    flavor = instance.flavor
    # A guest that boots from a volume has no local root disk.
    root_gb = 0 if _boots_from_volume(block_device_info) else flavor.root_gb
    return {'state': state, 'vcpus': flavor.vcpus, 'memory_mb': flavor.memory_mb,
            'disk_gb': root_gb + flavor.ephemeral_gb, 'root_gb': root_gb,
            'interfaces': [vif['id'] for vif in network_info or []],
            'volumes': _mapped_volumes(block_device_info)}

