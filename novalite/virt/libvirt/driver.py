"""LibvirtDriver: the compute driver on libvirt (KVM, QEMU/TCG, or the test driver).

It orchestrates: ``host`` owns the connection and events, ``guest`` wraps a domain,
``config`` writes the domain XML, ``imagebackend`` makes disks, and the image cache
downloads each image once per host. Where the test driver (``test:///``) lacks a call,
the driver says so in the log and does without. ``vif`` plugs the guests' VIFs into
Open vSwitch (os-vif) and gives their NICs. ``serial`` hands out the TCP ports of the
guests' serial consoles.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
from typing import TYPE_CHECKING, Any

import libvirt
from oslo_log import log as logging
from oslo_utils import excutils

from novalite import concurrency, exception, objects
from novalite.compute import power_state
from novalite.compute.provider_tree import ProviderTree
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.image import glance
from novalite.network import model as network_model
from novalite.virt import driver, hardware, imagecache
from novalite.virt.libvirt import (
    config,
    guest_info,
    imagebackend,
    machine_type,
    serial,
    snapshot,
    volume,
)
from novalite.virt.libvirt import guest as libvirt_guest
from novalite.virt.libvirt import host as libvirt_host
from novalite.virt.libvirt import live_migration as libvirt_lm
from novalite.virt.libvirt import vif as libvirt_vif

if TYPE_CHECKING:
    from novalite.compute.instance_events import ComputeVirtAPI, EventKey, InstanceLike

LOG = logging.getLogger(__name__)

DEFAULT_URIS = {'kvm': 'qemu:///system', 'qemu': 'qemu:///system', 'test': 'test:///default'}
# How long spawn/power_on/resume wait for a started domain to report running.
START_TIMEOUT = 30
# The console log is returned from its end, at most this many bytes (as Nova does).
MAX_CONSOLE_BYTES = 100 * 1024
GiB = 1024 ** 3


class LibvirtDriver(driver.ComputeDriver):
    """:param connection_uri: overrides ``[libvirt] connection_uri`` (one simulated
        host per node XML in tests).
    :param instances_path: overrides ``[DEFAULT] instances_path``.
    :param image_api: the Glance client the image cache downloads with.
    :param vif_plugger: plugs and unplugs VIFs; os-vif (``vif.py``) by default.
    """

    capabilities = dict(driver.ComputeDriver.capabilities, supports_reboot=True,
                        supports_pause=True, supports_suspend=True,
                        supports_console_output=True, supports_attach_interface=True,
                        supports_tagged_attach_interface=True)

    def __init__(self, virtapi: ComputeVirtAPI | None = None, connection_uri: str | None = None,
                 instances_path: str | None = None, image_api: glance.API | None = None,
                 vif_plugger: libvirt_vif.Plugger | None = None) -> None:
        super().__init__(virtapi)
        self.virt_type = CONF.libvirt.virt_type
        self.uri = (connection_uri or CONF.libvirt.connection_uri
                    or DEFAULT_URIS[self.virt_type])
        self.instances_path = instances_path or CONF.instances_path
        self.host = libvirt_host.Host(self.uri, self._handle_event)
        self.image_cache = imagecache.ImageCache(self.instances_path, image_api)
        self.image_backend = imagebackend.Backend(CONF.libvirt.images_type, self.virt_type)
        self._nodename: str | None = None
        self._service_host: str | None = None
        self._event_listener: driver.EventListener | None = None
        self.vif_plugger: libvirt_vif.Plugger = (
            vif_plugger if vif_plugger is not None else libvirt_vif)

    # -- host ----------------------------------------------------------------------------

    def init_host(self, host: str) -> None:
        if concurrency.choose() == 'eventlet':
            LOG.warning('libvirt calls block: under the eventlet backend they stall every '
                        'green thread; run novalite-compute with concurrency_backend = '
                        'threading')
        os.makedirs(self.instances_path, exist_ok=True)
        self.host.initialize()
        hv_type = self.host.get_connection().getType()
        if (hv_type == 'TEST') != (self.virt_type == 'test'):
            raise exception.HypervisorUnavailable(
                host=self.uri, reason='virt_type %s does not match the %s hypervisor'
                % (self.virt_type, hv_type))
        # Simulated hosts share the machine's hostname: name their node after the
        # service host, so that each is a provider of its own in Placement.
        self._nodename = host if self.host.is_test else self.host.hostname()
        self._service_host = host
        # The serial console ports of the guests defined before this start stay theirs.
        for guest in self.host.list_guests():
            serial.reserve_ports(serial.tcp_ports(guest.persistent_xml()))
        machine_type.record_existing(self, host)
        LOG.info('libvirt driver on %s (%s), node %s, instances in %s', self.uri, hv_type,
                 self._nodename, self.instances_path)
        if not self.host.is_test:
            _warn_if_private(self.instances_path)
        if self.host.is_test:
            LOG.info('libvirt test driver: used memory is counted from the running domains '
                     '(it reports no free memory for a node file); guests write no console '
                     'log; disks are created but never read')

    def cleanup_host(self, host: str) -> None:
        self.host.close()

    def register_event_listener(self, callback: driver.EventListener) -> None:
        """``callback(instance_uuid, event)`` for each guest lifecycle event (one of the
        ``host.EVENT_*`` names)."""
        self._event_listener = callback

    def _handle_event(self, instance_uuid: str, event: str) -> None:
        LOG.debug('Lifecycle event %s of %s', event, instance_uuid)
        if self._event_listener is not None:
            self._event_listener(instance_uuid, event)

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        return [self._nodename or CONF.host]

    def get_available_resource(self, nodename: str) -> dict[str, Any]:
        info = self.host.get_info()
        running = [g.resources() for g in self.host.list_guests(only_running=True)]
        memory_mb = info[1]
        if self.host.is_test:
            # The test driver reports no free memory for a custom node: count what the
            # running domains were given instead.
            memory_used = sum(mem for _vcpus, mem in running)
        else:
            memory_used = memory_mb - self.host.get_connection().getFreeMemory() // 2 ** 20
        disk = os.statvfs(self.instances_path)
        disk_total = disk.f_frsize * disk.f_blocks // GiB
        disk_free = disk.f_frsize * disk.f_bavail // GiB
        conn = self.host.get_connection()
        return {
            'vcpus': info[2], 'memory_mb': memory_mb, 'local_gb': disk_total,
            'vcpus_used': sum(vcpus for vcpus, _mem in running),
            'memory_mb_used': memory_used, 'local_gb_used': disk_total - disk_free,
            'hypervisor_type': conn.getType(), 'hypervisor_version': conn.getVersion(),
            'hypervisor_hostname': nodename,
            'cpu_info': json.dumps(self.host.cpu_info()),
            'disk_available_least': disk_free,
            # What ImagePropertiesFilter matches images against.
            'supported_instances': [[info[0], self.virt_type, 'hvm']],
        }

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str) -> None:
        resources = self.get_available_resource(nodename)
        provider_tree.update_inventory(nodename, driver.standard_inventory(resources))
        features = json.loads(resources['cpu_info']).get('features', [])
        cpu = libvirt_host.cpu_traits(features)
        if not cpu:
            LOG.debug('%s reports no CPU features that map to traits', self.uri)
        # Traits other than the CPU's (an operator's custom ones) stay as they are.
        others = {t for t in provider_tree.data(nodename).traits
                  if not t.startswith('HW_CPU_X86_')}
        provider_tree.update_traits(nodename, others | cpu)

    # -- instances -----------------------------------------------------------------------

    def get_host_uptime(self) -> str:
        """The uptime of the machine libvirtd runs on (this one: the driver talks to
        the local libvirtd, or to a simulated host of the test driver)."""
        return hardware.host_uptime()

    def list_instance_uuids(self) -> list[str]:
        return [guest.uuid for guest in self.host.list_guests()]

    def instance_exists(self, instance: objects.Instance) -> bool:
        try:
            self.host.get_guest(instance.uuid)
        except exception.InstanceNotFound:
            return False
        return True

    def instance_dir(self, instance: objects.Instance) -> str:
        return os.path.join(self.instances_path, instance.uuid)

    def spawn(self, context: RequestContext, instance: objects.Instance,
              image_meta: objects.ImageMeta | None, injected_files: list,
              admin_password: str | None, allocations: dict,
              network_info: network_model.NetworkInfo | None = None,
              block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        directory = self.instance_dir(instance)
        os.makedirs(directory, exist_ok=True)
        disks, kernel, initrd = self._create_disks(context, instance, image_meta, directory,
                                                   block_device_info)
        machine = machine_type.for_spawn(instance, image_meta, self.host.get_info()[0],
                                         self.host.get_connection().getCapabilities,
                                         self.virt_type)
        serial_port = self._acquire_serial_port()
        try:
            xml = config.guest_config(
                instance, self.virt_type, disks, os.path.join(directory, 'console.log'),
                image_meta=image_meta, kernel=kernel, initrd=initrd,
                interfaces=libvirt_vif.guest_interfaces(network_info),
                serial_port=serial_port, machine_type=machine).to_xml()
            guest = self._create_guest_with_network(instance, xml, network_info,
                                                    wait_for_vifs=True)
        except Exception:
            with excutils.save_and_reraise_exception():
                # A defined domain keeps its port until the manager destroys it.
                if serial_port is not None and not self.instance_exists(instance):
                    serial.release_port(*serial_port)
        LOG.info('Guest %s of instance %s is running', guest.name, instance.uuid)

    def _create_disks(self, context: RequestContext, instance: objects.Instance,
                      image_meta: objects.ImageMeta | None, directory: str,
                      block_device_info: driver.BlockDeviceInfo | None = None
                      ) -> tuple[list[config.GuestDisk], str | None, str | None]:
        """The local disks and the volumes' disks, the boot disk first: the root volume
        of an instance that boots from one (no image disk is made), else the image's
        copy at ``vda``; then the ephemeral disk at the first free name; then the other
        volumes at their device names."""
        flavor = instance.flavor
        volumes = volume.guest_disks(block_device_info)
        disks: list[config.GuestDisk] = []
        if volume.root_mapping(block_device_info) is not None:
            disks.append(volumes.pop(0))
        elif image_meta is not None and image_meta.obj_attr_is_set('id') and image_meta.id:
            base = self.image_cache.fetch(context, image_meta.id)
            root = self.image_backend.create_root(
                base, image_meta.disk_format, os.path.join(directory, 'disk'),
                flavor.root_gb)
            disks.append(config.GuestDisk(root.path, root.format, 'vda'))
        else:
            root = self.image_backend.create_blank(os.path.join(directory, 'disk'),
                                                   flavor.root_gb)
            disks.append(config.GuestDisk(root.path, root.format, 'vda'))
        if flavor.ephemeral_gb:
            eph = self.image_backend.create_blank(os.path.join(directory, 'disk.eph0'),
                                                  flavor.ephemeral_gb)
            disks.append(config.GuestDisk(eph.path, eph.format, volume.free_target(
                volume.used_targets(disks + volumes))))
        disks.extend(volumes)
        # AMI-style images boot a kernel and ramdisk of their own, named by properties.
        properties = (image_meta.properties or {}) if image_meta is not None else {}
        kernel = self._copy_image(context, properties.get('kernel_id'), directory, 'kernel')
        initrd = self._copy_image(context, properties.get('ramdisk_id'), directory,
                                  'ramdisk')
        return disks, kernel, initrd

    def _copy_image(self, context: RequestContext, image_id: str | None, directory: str,
                    name: str) -> str | None:
        if not image_id:
            return None
        path = os.path.join(directory, name)
        shutil.copyfile(self.image_cache.fetch(context, image_id), path)
        return path

    @staticmethod
    def _wait_running(guest: libvirt_guest.Guest) -> None:
        if not guest.wait_for_state((power_state.RUNNING,), START_TIMEOUT):
            raise exception.NovaliteException(
                'Guest %s is not running %ds after it was started'
                % (guest.uuid, START_TIMEOUT))

    def destroy(self, context: RequestContext, instance: objects.Instance,
                network_info: network_model.NetworkInfo | None = None,
                block_device_info: driver.BlockDeviceInfo | None = None,
                destroy_disks: bool = True) -> None:
        """Stop and undefine the domain, unplug its VIFs, remove its directory. Its
        volumes are network disks QEMU opened: nothing of them is on this host, and
        their Cinder attachments are the manager's to delete."""
        try:
            guest = self.host.get_guest(instance.uuid)
        except exception.InstanceNotFound:
            LOG.debug('Instance %s has no domain to destroy', instance.uuid)
        else:
            ports = self._serial_ports_of(instance, guest)
            guest.poweroff()
            try:
                guest.undefine()
            except libvirt.libvirtError as exc:
                if exc.get_error_code() != libvirt.VIR_ERR_NO_DOMAIN:
                    raise
            for host, port in ports:
                serial.release_port(host, port)
        self.unplug_vifs(instance, network_info, ignore_errors=True)
        if destroy_disks:
            shutil.rmtree(self.instance_dir(instance), ignore_errors=True)

    def get_info(self, instance: objects.Instance) -> hardware.InstanceInfo:
        return self.host.get_guest(instance.uuid).get_info()

    def get_console_output(self, context: RequestContext, instance: objects.Instance) -> str:
        path = os.path.join(self.instance_dir(instance), 'console.log')
        if not os.path.exists(path):
            if self.host.is_test:
                LOG.debug('The test driver writes no console log for %s', instance.uuid)
            return ''
        with open(path, 'rb') as log:
            log.seek(max(0, os.path.getsize(path) - MAX_CONSOLE_BYTES))
            return log.read().decode('utf-8', errors='replace')

    # -- consoles ------------------------------------------------------------------------

    def get_vnc_console(self, context: RequestContext, instance: objects.Instance
                        ) -> driver.ConsoleVNC:
        """The running guest's VNC server, reached at ``[vnc]
        server_proxyclient_address`` (its domain listens on ``[vnc] server_listen``)."""
        port = self.host.get_guest(instance.uuid).graphics_port('vnc')
        if port is None:
            # VNC was off when the guest was defined, or it is not running.
            raise exception.ConsoleTypeUnavailable(console_type='vnc')
        return driver.ConsoleVNC(host=CONF.vnc.server_proxyclient_address, port=port)

    def get_serial_console(self, context: RequestContext, instance: objects.Instance
                           ) -> driver.ConsoleSerial:
        """The guest's first serial port on TCP, at the address its domain names."""
        if not CONF.serial_console.enabled:
            raise exception.ConsoleTypeUnavailable(console_type='serial')
        guest = self.host.get_guest(instance.uuid)
        for host, port in serial.tcp_ports(guest.xml()):
            return driver.ConsoleSerial(host=host, port=port)
        # Defined while serial consoles were off: its console is a file.
        raise exception.ConsoleNotAvailable()

    @staticmethod
    def _acquire_serial_port() -> tuple[str, int] | None:
        """A port for a new guest's serial console, when serial consoles are on."""
        if not CONF.serial_console.enabled:
            return None
        host = CONF.serial_console.proxyclient_address
        return host, serial.acquire_port(host)

    def _serial_ports_of(self, instance: objects.Instance,
                         guest: libvirt_guest.Guest) -> set[tuple[str, int]]:
        """The serial console ports the instance holds: its domain's, and while it is
        rescued, those of the definition it goes back to."""
        from novalite.virt.libvirt import rescue
        ports = set(serial.tcp_ports(guest.persistent_xml()))
        saved = os.path.join(self.instance_dir(instance), rescue.UNRESCUE_XML)
        if os.path.exists(saved):
            with open(saved) as f:
                ports.update(serial.tcp_ports(f.read()))
        return ports

    # -- power -----------------------------------------------------------------------------

    def reboot(self, context: RequestContext, instance: objects.Instance,
               network_info: network_model.NetworkInfo | None = None, reboot_type: str = 'SOFT',
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        """SOFT: shut down cleanly and start again, else (timeout) a HARD reboot;
        HARD: stop at once and start again."""
        guest = self.host.get_guest(instance.uuid)
        if reboot_type == 'SOFT':
            if self._clean_shutdown(guest, CONF.libvirt.wait_soft_reboot_seconds):
                guest.launch()
                self._wait_running(guest)
                LOG.info('Instance %s soft rebooted', instance.uuid)
                return
            LOG.warning('Instance %s did not shut down within %ds; rebooting it hard',
                        instance.uuid, CONF.libvirt.wait_soft_reboot_seconds)
        guest.poweroff()
        self.plug_vifs(instance, network_info)
        guest.launch()
        self._wait_running(guest)
        LOG.info('Instance %s hard rebooted', instance.uuid)

    @staticmethod
    def _clean_shutdown(guest: libvirt_guest.Guest, timeout: int) -> bool:
        """Ask the guest to shut down; True once it is off within ``timeout`` seconds."""
        if not guest.is_active():
            return True
        if timeout <= 0:
            return False
        try:
            guest.shutdown()
        except libvirt.libvirtError as exc:
            LOG.warning('Guest %s refused a clean shutdown: %s', guest.uuid,
                        exc.get_error_message())
            return False
        return guest.wait_for_state((power_state.SHUTDOWN, power_state.CRASHED), timeout)

    def power_off(self, instance: objects.Instance, timeout: int = 0,
                  retry_interval: int = 0) -> None:
        """Stop the guest: cleanly within ``timeout`` seconds if given, else at once."""
        guest = self.host.get_guest(instance.uuid)
        if timeout and self._clean_shutdown(guest, timeout):
            return
        guest.poweroff()

    def power_on(self, context: RequestContext, instance: objects.Instance,
                 network_info: network_model.NetworkInfo | None = None,
                 block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        guest = self.host.get_guest(instance.uuid)
        if not guest.is_active():
            self.plug_vifs(instance, network_info)
            guest.launch()
        self._wait_running(guest)

    def pause(self, instance: objects.Instance) -> None:
        self.host.get_guest(instance.uuid).pause()

    def unpause(self, instance: objects.Instance) -> None:
        self.host.get_guest(instance.uuid).resume()

    def suspend(self, context: RequestContext, instance: objects.Instance) -> None:
        """Save the guest's memory to disk and stop it (libvirt managed save)."""
        self.host.get_guest(instance.uuid).save()

    def resume(self, context: RequestContext, instance: objects.Instance,
               network_info: network_model.NetworkInfo | None = None,
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        guest = self.host.get_guest(instance.uuid)
        self.plug_vifs(instance, network_info)
        guest.launch()
        self._wait_running(guest)

    def get_instance_diagnostics(self, instance: objects.Instance) -> dict[str, Any]:
        """Diagnostics from the domain's info and its vCPU, disk and NIC counters."""
        return guest_info.diagnostics_of(self, instance)

    # -- snapshots and the image cache --------------------------------------------------

    def cache_image(self, context: RequestContext, image_id: str) -> bool:
        """Fetch the image into this host's cache (``_base``), where spawn looks."""
        return self.image_cache.cache(context, image_id)

    def snapshot(self, context: RequestContext, instance: objects.Instance, image_id: str,
                 update_task_state: driver.UpdateTaskState) -> None:
        """Upload the root disk as the data of Glance image ``image_id``
        (``virt/libvirt/snapshot.py``)."""
        snapshot.snapshot(self, context, instance, image_id, update_task_state)

    def _root_disk(self, directory: str) -> imagebackend.Disk:
        """The root disk spawn made, with the format it has."""
        path = os.path.join(directory, 'disk')
        if not os.path.exists(path):
            raise exception.NovaliteException('Instance disk %s does not exist' % path)
        # As create_root made it; not asked of qemu-img, which a running QEMU locks out.
        qcow2 = self.image_backend.images_type == 'qcow2' and self.image_backend.qemu_img
        return imagebackend.Disk(path, 'qcow2' if qcow2 else 'raw')

    # -- VIFs (see virt/libvirt/vif.py) ----------------------------------------------------

    def plug_vifs(self, instance: objects.Instance,
                  network_info: network_model.NetworkInfo | None) -> None:
        """Plug every VIF (again: plugging is idempotent)."""
        for vif in network_info or []:
            self.vif_plugger.plug(instance, vif)

    def unplug_vifs(self, instance: objects.Instance,
                    network_info: network_model.NetworkInfo | None,
                    ignore_errors: bool = False) -> None:
        for vif in network_info or []:
            try:
                self.vif_plugger.unplug(instance, vif)
            except exception.NovaliteException as exc:
                if not ignore_errors:
                    raise
                LOG.warning('Could not unplug VIF %s of %s: %s', vif['id'],
                            instance.uuid, exc)

    def attach_interface(self, context: RequestContext, instance: objects.Instance,
                         image_meta: objects.ImageMeta | None, vif: network_model.VIF) -> None:
        """Plug the VIF (os-vif), then add its NIC to the domain's definition and, when
        the domain runs (or is paused), to the guest too; a failed attach unplugs."""
        guest = self.host.get_guest(instance.uuid)
        xml = config.interface_xml(libvirt_vif.guest_interface(vif))
        self.vif_plugger.plug(instance, vif)
        try:
            guest.attach_device(xml, persistent=True, live=guest.is_active())
        except libvirt.libvirtError as exc:
            LOG.warning('Could not attach port %s to %s: %s', vif['id'], instance.uuid, exc)
            self.unplug_vifs(instance, [vif], ignore_errors=True)
            raise exception.InterfaceAttachFailed(instance_uuid=instance.uuid) from exc

    def detach_interface(self, context: RequestContext, instance: objects.Instance,
                         vif: network_model.VIF) -> None:
        """Remove the NIC (matched by MAC) from the guest and the definition wherever it
        still is, then unplug the VIF."""
        try:
            guest = self.host.get_guest(instance.uuid)
        except exception.InstanceNotFound:
            guest = None
        if guest is not None:
            live = guest.is_active() and guest.has_interface(vif['address'])
            persistent = guest.has_interface(vif['address'], persistent=True)
            if live or persistent:
                # The NIC as detachDeviceFlags matches it: by MAC (a VIF whose binding
                # broke since still has its NIC).
                xml = config.interface_xml(config.GuestInterface(
                    mac=vif['address'], target_dev=libvirt_vif.devname(vif),
                    mtu=libvirt_vif.mtu(vif)))
                try:
                    guest.detach_device(xml, persistent=persistent, live=live)
                except libvirt.libvirtError as exc:
                    raise exception.InterfaceDetachFailed(
                        instance_uuid=instance.uuid) from exc
        self.unplug_vifs(instance, [vif])

    def _vif_plugged_events(self, network_info: network_model.NetworkInfo
                            ) -> list[EventKey]:
        """The ``network-vif-plugged`` events to wait for: one per port Neutron has not
        reported active yet (none when waiting is off or there is no virtapi)."""
        if not CONF.vif_plugging_timeout or self.virtapi is None:
            return []
        return [('network-vif-plugged', vif['id']) for vif in network_info
                if not vif.get('active', True)]

    def _neutron_failed_callback(self, event_name: str, instance: InstanceLike) -> None:
        LOG.error('Neutron reported failure on event %s for instance %s', event_name,
                  instance.uuid)
        if CONF.vif_plugging_is_fatal:
            raise exception.VirtualInterfaceCreateException(
                reason='Neutron reported failure on event %s' % event_name)

    def _create_guest_with_network(self, instance: objects.Instance, xml: str,
                                   network_info: network_model.NetworkInfo | None,
                                   power_on: bool = True,
                                   wait_for_vifs: bool = False) -> libvirt_guest.Guest:
        """Plug the VIFs and define the domain; start it (if ``power_on``) once Neutron
        reported the ports plugged, when ``wait_for_vifs``. The test driver cannot start
        a domain paused, so the domain is defined but not started while waiting. On
        failure the VIFs are unplugged again."""
        network_info = network_info or []
        events = self._vif_plugged_events(network_info) if wait_for_vifs else []
        try:
            if events and self.virtapi is not None:
                with self.virtapi.wait_for_instance_event(
                        instance, events, deadline=CONF.vif_plugging_timeout,
                        error_callback=self._neutron_failed_callback):
                    guest = self._plug_and_define(instance, xml, network_info)
            else:
                guest = self._plug_and_define(instance, xml, network_info)
            if power_on:
                guest.launch()
                self._wait_running(guest)
        except Exception:
            with excutils.save_and_reraise_exception():
                self.unplug_vifs(instance, network_info, ignore_errors=True)
        return guest

    def _plug_and_define(self, instance: objects.Instance, xml: str,
                         network_info: network_model.NetworkInfo) -> libvirt_guest.Guest:
        self.plug_vifs(instance, network_info)
        return self.host.define(xml)

    # -- resize and cold migration (see virt/libvirt/migration.py) ------------------------

    def migrate_disk_and_power_off(self, context: RequestContext, instance: objects.Instance,
                                   dest: str, flavor: objects.Flavor,
                                   network_info: network_model.NetworkInfo | None = None,
                                   block_device_info: driver.BlockDeviceInfo | None = None,
                                   timeout: int = 0, retry_interval: int = 0) -> dict:
        """Stop the guest and set its directory aside as ``<dir>_resize``; the domain
        stays defined (stopped) here until the resize is confirmed or reverted."""
        from novalite.virt.libvirt import migration
        migration.check_disks_fit(
            instance, flavor,
            volume_backed=volume.root_mapping(block_device_info) is not None)
        guest = self.host.get_guest(instance.uuid)
        if not (timeout and self._clean_shutdown(guest, timeout)):
            guest.poweroff()
        self.unplug_vifs(instance, network_info)
        directory = self.instance_dir(instance)
        aside = migration.set_aside(directory, guest.xml())
        LOG.info('Instance %s stopped and its files set aside in %s for %s',
                 instance.uuid, aside, dest)
        return {'source_dir': aside, 'old_dir': directory}

    def finish_migration(self, context: RequestContext, migration: objects.Migration,
                         instance: objects.Instance, disk_info: dict,
                         network_info: network_model.NetworkInfo,
                         image_meta: objects.ImageMeta | None, resize_instance: bool,
                         allocations: dict, block_device_info: driver.BlockDeviceInfo | None = None,
                         power_on: bool = True) -> None:
        """Copy the set-aside files here, grow the disks, define the domain with the
        instance's (new) flavor and start it when ``power_on``."""
        from novalite.virt.libvirt import migration as lv_migration
        directory = self.instance_dir(instance)
        source_dir = disk_info['source_dir']
        with open(os.path.join(source_dir, lv_migration.SAVED_XML)) as f:
            old_xml = f.read()
        lv_migration.copy_in(source_dir, directory)
        if resize_instance:
            lv_migration.grow_disks(directory, instance.flavor,
                                    None if self.host.is_test else self.image_backend.qemu_img)
        xml, acquired = serial.rebind_ports(lv_migration.resized_xml(
            old_xml, instance.flavor, disk_info['old_dir'], directory))
        try:
            self._create_guest_with_network(instance, xml, network_info, power_on=power_on)
        except Exception:
            with excutils.save_and_reraise_exception():
                if not self.instance_exists(instance):
                    for host, port in acquired:
                        serial.release_port(host, port)
        LOG.info('Guest of instance %s defined here with %d MiB and %d vCPUs',
                 instance.uuid, instance.flavor.memory_mb, instance.flavor.vcpus)

    def confirm_migration(self, context: RequestContext, migration: objects.Migration,
                          instance: objects.Instance,
                          network_info: network_model.NetworkInfo | None = None) -> None:
        """Remove the set-aside files, and the old domain when the instance moved to
        another host."""
        from novalite.virt.libvirt import migration as lv_migration
        shutil.rmtree(lv_migration.resize_dir(self.instance_dir(instance)),
                      ignore_errors=True)
        if migration.source_compute != migration.dest_compute:
            self.destroy(context, instance, destroy_disks=False)

    def finish_revert_migration(self, context: RequestContext, instance: objects.Instance,
                                network_info: network_model.NetworkInfo,
                                migration: objects.Migration,
                                block_device_info: driver.BlockDeviceInfo | None = None,
                                power_on: bool = True) -> None:
        """Put the set-aside files back and define the old domain again."""
        from novalite.virt.libvirt import migration as lv_migration
        xml = lv_migration.restore(self.instance_dir(instance))
        # The domain never left this host: its serial ports are still its own.
        serial.reserve_ports(serial.tcp_ports(xml))
        self._create_guest_with_network(instance, xml, network_info, power_on=power_on)

    # -- live migration: virt/libvirt/live_migration.py (the driver its first argument) --

    check_can_live_migrate_destination = libvirt_lm.check_can_live_migrate_destination
    check_can_live_migrate_source = libvirt_lm.check_can_live_migrate_source
    pre_live_migration = libvirt_lm.pre_live_migration
    live_migration = libvirt_lm.live_migration
    live_migration_abort = libvirt_lm.live_migration_abort
    live_migration_force_complete = libvirt_lm.live_migration_force_complete
    post_live_migration_at_source = libvirt_lm.post_live_migration_at_source
    post_live_migration_at_destination = libvirt_lm.post_live_migration_at_destination
    rollback_live_migration_at_destination = libvirt_lm.rollback_live_migration_at_destination

    # -- volumes (see virt/libvirt/volume.py) ---------------------------------------------

    def get_volume_connector(self, instance: objects.Instance) -> dict[str, Any]:
        """os-brick's connector properties of this host (read once per process)."""
        return volume.connector_properties(self._service_host or CONF.host)

    def attach_volume(self, context: RequestContext, connection_info: driver.ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      disk_bus: str | None = None, device_type: str | None = None,
                      encryption: dict[str, Any] | None = None) -> None:
        if encryption:
            raise exception.VolumeAttachFailed(
                volume_id=volume.volume_id(connection_info),
                reason='encrypted volumes are not supported by novalite')
        volume.attach(self.host, instance, connection_info, mountpoint, disk_bus,
                      device_type)

    def detach_volume(self, context: RequestContext, connection_info: driver.ConnectionInfo,
                      instance: objects.Instance, mountpoint: str,
                      encryption: dict[str, Any] | None = None) -> None:
        volume.detach(self.host, instance, connection_info, mountpoint)

    def swap_volume(self, context: RequestContext, old_connection_info: driver.ConnectionInfo,
                    new_connection_info: driver.ConnectionInfo, instance: objects.Instance,
                    mountpoint: str, resize_to: int) -> None:
        volume.swap(self.host, instance, old_connection_info, new_connection_info,
                    mountpoint, resize_to)

    # -- in-place actions (rescue, password, crash dump) ---------------------------------

    def rescue(self, context: RequestContext, instance: objects.Instance,
               network_info: network_model.NetworkInfo | None, image_meta: objects.ImageMeta,
               rescue_password: str | None,
               block_device_info: driver.BlockDeviceInfo | None = None) -> None:
        """Boot the rescue image with the root disk second (see ``rescue.py``). The
        password cannot be injected without a config drive: it is not used."""
        from novalite.virt.libvirt import rescue
        self.plug_vifs(instance, network_info)
        rescue.rescue(self, context, instance, image_meta)

    def unrescue(self, context: RequestContext, instance: objects.Instance) -> None:
        from novalite.virt.libvirt import rescue
        rescue.unrescue(self, instance)

    def set_admin_password(self, instance: objects.Instance, new_pass: str) -> None:
        """Through the QEMU guest agent, which the image must declare
        (``hw_qemu_guest_agent=yes``), as Nova requires; the user is the image's
        ``os_admin_user``, else root (Administrator on Windows)."""
        system_metadata = instance.system_metadata or {}
        if (system_metadata.get('image_hw_qemu_guest_agent') or '').lower() not in (
                'yes', 'true', '1'):
            raise exception.QemuGuestAgentNotEnabled()
        user = system_metadata.get('image_os_admin_user') or (
            'Administrator' if instance.os_type == 'windows' else 'root')
        guest = self.host.get_guest(instance.uuid)
        try:
            guest.set_user_password(user, new_pass)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_AGENT_UNRESPONSIVE:
                raise NotImplementedError() from exc
            raise exception.NovaliteException(
                'Error from libvirt while setting the password of "%s": [Error Code %s] %s'
                % (user, exc.get_error_code(), exc.get_error_message())) from exc

    def trigger_crash_dump(self, instance: objects.Instance) -> None:
        """Inject an NMI into the guest."""
        try:
            self.host.get_guest(instance.uuid).inject_nmi()
        except libvirt.libvirtError as exc:
            code = exc.get_error_code()
            if code == libvirt.VIR_ERR_NO_SUPPORT:
                raise exception.TriggerCrashDumpNotSupported() from exc
            if code == libvirt.VIR_ERR_OPERATION_INVALID:
                raise exception.InstanceNotRunning(instance_id=instance.uuid) from exc
            raise

def _warn_if_private(path: str) -> None:
    """Warn when a parent of ``path`` cannot be entered by other users: under
    ``qemu:///system`` QEMU runs unprivileged, and libvirt hands it the instance's files
    but not their directories, so every guest would fail to start."""
    current = os.path.abspath(path)
    while current != os.path.dirname(current):
        current = os.path.dirname(current)
        if os.path.isdir(current) and not os.stat(current).st_mode & stat.S_IXOTH:
            LOG.warning('%s is not searchable by other users: QEMU, running as an '
                        'unprivileged user, cannot open the disks under %s', current, path)
            return
