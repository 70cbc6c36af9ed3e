"""Live migration on the libvirt driver, as Nova's libvirt driver does it.

The destination's check says where the source reaches it (``target_connect_addr``,
from ``[libvirt] live_migration_inbound_addr``) and which storage its instances folder
is (``STORAGE_ID_FILE``: the same id on both hosts means a shared folder); the source's
check settles ``block_migration`` and lists its local disks. ``pre_live_migration``
makes the instance's folder and empty disks on the destination (a qcow2 overlay on the
image cache's base, as spawn does), takes serial console ports there and plugs the
VIFs. The source's libvirtd then migrates the guest peer to peer
(``migrateToURI3`` with ``LIVE|PEER2PEER|PERSIST_DEST|UNDEFINE_SOURCE``, and
``NON_SHARED_INC`` for a block migration: the local disks' top layers go over NBD)
with the domain XML rewritten for the destination (serial ports, VNC listen address,
tap names); QEMU's stream goes to ``tcp://<target_connect_addr>``. A monitor polls the
job every ``MONITOR_INTERVAL`` seconds: it saves the progress in the migration's
``memory_*``/``disk_*`` counters, raises the allowed downtime step by step, and takes
``[libvirt] live_migration_timeout_action`` once the completion timeout passed. An
abort is ``abortJob``; a forced completion pauses the guest (resumed if the migration
fails after all).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent import futures
from typing import TYPE_CHECKING

import libvirt
from oslo_log import log as logging
from oslo_service import loopingcall

from novalite import exception, executor, objects
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.network import model as network_model
from novalite.virt import driver
from novalite.virt.libvirt import serial
from novalite.virt.libvirt import vif as libvirt_vif

if TYPE_CHECKING:
    from novalite.virt.libvirt.driver import LibvirtDriver

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3
# A file in each host's instances folder naming its storage: the destination sends its
# id, and the source finds the same one in its own folder only when they share it.
STORAGE_ID_FILE = '.novalite-storage-id'
# Seconds between two looks of the monitor at the migration job (as Nova's).
MONITOR_INTERVAL = 0.5
# Until the job is first seen running: its counters are saved as soon as it starts,
# even when it ends within one MONITOR_INTERVAL (a small guest over a fast link).
FIRST_LOOK_INTERVAL = 0.05
# What the hosts tell each other in ``migrate_data.driver_data``.
STORAGE_ID = 'storage_id'
DISKS = 'disks'
SERIAL_PORT_COUNT = 'serial_port_count'
SERIAL_LISTEN_ADDR = 'serial_listen_addr'
SERIAL_LISTEN_PORTS = 'serial_listen_ports'
VNC_LISTEN_ADDR = 'graphics_listen_addr_vnc'
# The migration job's counters, as the migrations table keeps them.
# The monitor's clock (tests move it).
_clock = time.monotonic
COUNTERS = ('memory_total', 'memory_processed', 'memory_remaining', 'disk_total',
            'disk_processed', 'disk_remaining')


@dataclasses.dataclass
class Job:
    """One running migration of this host, as abort and force complete find it."""
    domain: libvirt.virDomain
    aborted: bool = False
    paused: bool = False


_jobs: dict[str, Job] = {}
_jobs_lock = threading.Lock()


@contextlib.contextmanager
def _registered(instance_uuid: str, job: Job) -> Iterator[Job]:
    with _jobs_lock:
        _jobs[instance_uuid] = job
    try:
        yield job
    finally:
        with _jobs_lock:
            _jobs.pop(instance_uuid, None)


def _job(instance_uuid: str) -> Job | None:
    with _jobs_lock:
        return _jobs.get(instance_uuid)


# -- the checks -------------------------------------------------------------------------

def storage_id(instances_path: str) -> str:
    """The id of the storage holding ``instances_path`` (made the first time)."""
    path = os.path.join(instances_path, STORAGE_ID_FILE)
    os.makedirs(instances_path, exist_ok=True)
    try:
        with open(path, 'x') as f:
            f.write(str(uuid.uuid4()))
    except FileExistsError:
        pass
    with open(path) as f:
        return f.read().strip()


def check_can_live_migrate_destination(
        drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
        block_migration: bool | None,
        migrate_data: objects.LiveMigrateData) -> objects.LiveMigrateData:
    """On the destination: what the source needs to reach and prepare it."""
    if drv.host.is_test:
        raise exception.MigrationPreCheckError(
            reason='the libvirt test driver has no migration support')
    migrate_data.block_migration = block_migration
    migrate_data.target_connect_addr = CONF.libvirt.live_migration_inbound_addr
    migrate_data.dest_host = drv._service_host or CONF.host
    migrate_data.driver_data = dict(
        migrate_data.driver_data, **{STORAGE_ID: storage_id(drv.instances_path),
                                     VNC_LISTEN_ADDR: CONF.vnc.server_listen})
    return migrate_data


def check_can_live_migrate_source(drv: LibvirtDriver, context: RequestContext,
                                  instance: objects.Instance,
                                  migrate_data: objects.LiveMigrateData
                                  ) -> objects.LiveMigrateData:
    """On the source: whether the folder is shared, whether the guest has local disks,
    and so whether it moves by block migration.

    :raises MigrationPreCheckError: block migration asked with shared storage, or a
        shared-storage migration asked without it
    """
    domain = _domain(drv, instance)
    xml = domain.XMLDesc(0)
    disks = local_disks(domain, xml)
    shared_path = (migrate_data.driver_data.get(STORAGE_ID)
                   == storage_id(drv.instances_path))
    migrate_data.is_shared_instance_path = shared_path
    migrate_data.is_shared_block_storage = not disks
    shared = shared_path or not disks
    if migrate_data.block_migration is None:
        migrate_data.block_migration = not shared
    elif migrate_data.block_migration and shared:
        raise exception.MigrationPreCheckError(
            reason='block migration cannot be used with shared storage')
    elif not migrate_data.block_migration and not shared:
        raise exception.MigrationPreCheckError(
            reason='a live migration without block migration needs the instances '
                   'folder shared with the destination, or a server booted from a volume '
                   'without local disks')
    migrate_data.driver_data = dict(
        migrate_data.driver_data, **{DISKS: json.dumps(disks),
                                     SERIAL_PORT_COUNT: str(len(serial.tcp_ports(xml)))})
    return migrate_data


def local_disks(domain: libvirt.virDomain, xml: str) -> list[dict]:
    """The guest's disks that are files of this host (its volumes are network disks),
    as in its instance folder: name, target, format, virtual size and the format of the
    base it is an overlay of."""
    disks = []
    for disk in ET.fromstring(xml).findall("devices/disk[@type='file'][@device='disk']"):
        source, target = disk.find('source'), disk.find('target')
        path = source.get('file') if source is not None else None
        if not path or target is None:
            continue
        dev = target.get('dev', '')
        driver_elem = disk.find('driver')
        backing = disk.find('backingStore/format')
        disks.append({'name': os.path.basename(path), 'target': dev,
                      'format': driver_elem.get('type', 'raw') if driver_elem is not None
                      else 'raw',
                      'size': domain.blockInfo(dev)[0],
                      'backing_format': backing.get('type') if backing is not None else None})
    return disks


# -- the destination ----------------------------------------------------------------------

def pre_live_migration(drv: LibvirtDriver, context: RequestContext,
                       instance: objects.Instance,
                       network_info: network_model.NetworkInfo,
                       block_device_info: driver.BlockDeviceInfo | None,
                       migrate_data: objects.LiveMigrateData) -> objects.LiveMigrateData:
    """On the destination: the folder, disks, serial ports and VIFs the guest needs.

    :raises MigrationError: they cannot be made (rollback removes what was)
    """
    try:
        if not migrate_data.is_shared_instance_path:
            _create_files(drv, context, instance, migrate_data)
        ports: list[int] = []
        count = int(migrate_data.driver_data.get(SERIAL_PORT_COUNT) or 0)
        address = CONF.serial_console.proxyclient_address
        if CONF.serial_console.enabled:
            # Recorded as they come, so that a rollback releases what was taken.
            for _ in range(count):
                ports.append(serial.acquire_port(address))
                migrate_data.driver_data = dict(
                    migrate_data.driver_data, **{
                        SERIAL_LISTEN_ADDR: address,
                        SERIAL_LISTEN_PORTS: ','.join(str(p) for p in ports)})
        drv.plug_vifs(instance, network_info)
    except (OSError, exception.NovaliteException) as exc:
        raise exception.MigrationError(
            reason='the destination cannot take instance %s: %s' % (instance.uuid, exc)
        ) from exc
    return migrate_data


def _create_files(drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
                  migrate_data: objects.LiveMigrateData) -> None:
    """Empty disks of the source's sizes (a block migration fills them), on the same
    base image; the kernel and ramdisk the image names, from the image cache."""
    directory = drv.instance_dir(instance)
    os.makedirs(directory, exist_ok=True)
    for disk in json.loads(migrate_data.driver_data.get(DISKS) or '[]'):
        path = os.path.join(directory, disk['name'])
        if os.path.exists(path):
            continue
        if disk['backing_format'] and instance.image_ref:
            base = drv.image_cache.fetch(context, instance.image_ref)
            size = disk['size']
            drv.image_backend.create_root(base, disk['backing_format'], path,
                                          size // GiB if size % GiB == 0 else 0)
        else:
            drv.image_backend.create_blank(path, math.ceil(disk['size'] / GiB))
    for name in ('kernel', 'ramdisk'):
        image_id = _image_property(instance, name + '_id')
        if image_id:
            shutil.copyfile(drv.image_cache.fetch(context, image_id),
                            os.path.join(directory, name))


def _image_property(instance: objects.Instance, name: str) -> str | None:
    """A property of the server's image, as the server keeps it (system metadata)."""
    return (instance.system_metadata or {}).get('image_' + name) or None


def post_live_migration_at_destination(drv: LibvirtDriver, context: RequestContext,
                                       instance: objects.Instance,
                                       network_info: network_model.NetworkInfo,
                                       block_migration: bool,
                                       block_device_info: driver.BlockDeviceInfo | None
                                       ) -> None:
    """The guest runs here: its definition is kept (PERSIST_DEST made it; defined
    again if libvirt did not)."""
    domain = _domain(drv, instance)
    if not domain.isPersistent():
        drv.host.define(domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
    LOG.info('Instance %s runs here after its live migration', instance.uuid)


def rollback_live_migration_at_destination(
        drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
        network_info: network_model.NetworkInfo,
        block_device_info: driver.BlockDeviceInfo | None, destroy_disks: bool,
        migrate_data: objects.LiveMigrateData) -> None:
    """Remove what ``pre_live_migration`` made, and a guest that came half-way."""
    try:
        domain: libvirt.virDomain | None = _domain(drv, instance)
    except exception.InstanceNotFound:
        domain = None
    if domain is not None:
        with contextlib.suppress(libvirt.libvirtError):
            if domain.isActive():
                domain.destroy()
        with contextlib.suppress(libvirt.libvirtError):
            domain.undefine()
    address = migrate_data.driver_data.get(SERIAL_LISTEN_ADDR)
    for port in _ports(migrate_data.driver_data.get(SERIAL_LISTEN_PORTS)):
        serial.release_port(address or '', port)
    drv.unplug_vifs(instance, network_info, ignore_errors=True)
    if destroy_disks and not migrate_data.is_shared_instance_path:
        shutil.rmtree(drv.instance_dir(instance), ignore_errors=True)


def _ports(value: str | None) -> list[int]:
    return [int(p) for p in value.split(',')] if value else []


# -- the source -------------------------------------------------------------------------

def destination_xml(xml: str, migrate_data: objects.LiveMigrateData) -> str:
    """The domain XML as the destination runs it: its serial ports, its VNC listen
    address, the tap names of its VIFs (the ports as bound there)."""
    domain = ET.fromstring(xml)
    data = migrate_data.driver_data
    ports = _ports(data.get(SERIAL_LISTEN_PORTS))
    if ports:
        moved: dict[tuple[str | None, str | None], str] = {}
        # A live XML repeats the first serial port as <console>: both move.
        for source in (domain.findall("devices/serial[@type='tcp']/source") +
                       domain.findall("devices/console[@type='tcp']/source")):
            key = (source.get('host'), source.get('service'))
            if key not in moved and len(moved) < len(ports):
                moved[key] = str(ports[len(moved)])
            if key in moved:
                source.set('host', data.get(SERIAL_LISTEN_ADDR) or '')
                source.set('service', moved[key])
    vnc_listen = data.get(VNC_LISTEN_ADDR)
    if vnc_listen:
        for graphics in domain.findall("devices/graphics[@type='vnc']"):
            graphics.set('listen', vnc_listen)
            for listen in graphics.findall("listen[@type='address']"):
                listen.set('address', vnc_listen)
    vifs = {vif['address']: vif for vif in migrate_data.dest_network_info or []}
    for interface in domain.findall('devices/interface'):
        mac, target = interface.find('mac'), interface.find('target')
        vif = vifs.get(mac.get('address', '') if mac is not None else '')
        if vif is not None and target is not None:
            target.set('dev', libvirt_vif.devname(vif))
    return ET.tostring(domain, encoding='unicode')


def destination_uri(dest: str, migrate_data: objects.LiveMigrateData) -> str:
    """The destination libvirtd's URI, for the source's libvirtd (peer to peer)."""
    address = _bracketed(migrate_data.target_connect_addr or dest)
    if CONF.libvirt.live_migration_uri:
        return CONF.libvirt.live_migration_uri % address
    return 'qemu+%s://%s/system' % (CONF.libvirt.live_migration_scheme or 'tcp', address)


def _bracketed(address: str) -> str:
    return '[%s]' % address if ':' in address and not address.startswith('[') else address


def migrate_flags(block_migration: bool) -> int:
    flags = (libvirt.VIR_MIGRATE_LIVE | libvirt.VIR_MIGRATE_PEER2PEER |
             libvirt.VIR_MIGRATE_UNDEFINE_SOURCE | libvirt.VIR_MIGRATE_PERSIST_DEST)
    if block_migration:
        flags |= libvirt.VIR_MIGRATE_NON_SHARED_INC
    return flags


def migrate_params(xml: str, disks: list[str],
                   migrate_data: objects.LiveMigrateData) -> dict[str, object]:
    params: dict[str, object] = {libvirt.VIR_MIGRATE_PARAM_DEST_XML: xml,
                                 libvirt.VIR_MIGRATE_PARAM_PERSIST_XML: xml}
    if migrate_data.target_connect_addr:
        params[libvirt.VIR_MIGRATE_PARAM_URI] = 'tcp://%s' % _bracketed(
            migrate_data.target_connect_addr)
    if CONF.libvirt.live_migration_bandwidth:
        params[libvirt.VIR_MIGRATE_PARAM_BANDWIDTH] = CONF.libvirt.live_migration_bandwidth
    if disks:
        params[libvirt.VIR_MIGRATE_PARAM_MIGRATE_DISKS] = disks
    return params


def data_gb(instance: objects.Instance, disk_sizes: list[int]) -> float:
    """GiB to copy, as the timeouts count them: memory and each disk, 2 at least each."""
    return max(2.0, instance.flavor.memory_mb / 1024) + sum(
        max(2.0, size / GiB) for size in disk_sizes)


def downtime_steps(gb: float) -> list[tuple[int, int]]:
    """(seconds elapsed, max downtime in ms) steps, up to ``live_migration_downtime``."""
    downtime = CONF.libvirt.live_migration_downtime
    steps = CONF.libvirt.live_migration_downtime_steps
    delay = int(CONF.libvirt.live_migration_downtime_delay * gb)
    base = downtime / steps
    offset = (downtime - base) / steps
    return [(delay * i, int(base + offset * i)) for i in range(steps + 1)]


def live_migration(drv: LibvirtDriver, context: RequestContext, instance: objects.Instance,
                   dest: str, post_method: driver.PostMethod,
                   recover_method: driver.RecoverMethod, block_migration: bool,
                   migrate_data: objects.LiveMigrateData) -> None:
    """Migrate the guest to ``dest``; call ``post_method`` or ``recover_method``."""
    try:
        domain = _domain(drv, instance)
        xml = domain.XMLDesc(libvirt.VIR_DOMAIN_XML_MIGRATABLE)
        disks = local_disks(domain, domain.XMLDesc(0)) if block_migration else []
        dest_xml = destination_xml(xml, migrate_data)
        params = migrate_params(dest_xml, [d['target'] for d in disks], migrate_data)
        uri = destination_uri(dest, migrate_data)
        source_ports = serial.tcp_ports(domain.XMLDesc(0))
    except (libvirt.libvirtError, exception.NovaliteException, ValueError) as exc:
        LOG.error('Live migration of %s to %s cannot start: %s', instance.uuid, dest, exc)
        recover_method(context, instance, dest, migrate_data, error=exc,
                       migration_status='error')
        return
    flags = migrate_flags(bool(disks))
    LOG.info('Live migration of %s to %s (%s, flags %#x, disks %s)', instance.uuid, dest,
             uri, flags, [d['target'] for d in disks])
    with _registered(instance.uuid, Job(domain)) as job:
        error = _migrate(job, instance, uri, params, flags, migrate_data.migration,
                         data_gb(instance, [d['size'] for d in disks]))
    if error is None:
        for host, port in source_ports:
            serial.release_port(host, port)
        LOG.info('Live migration of %s to %s completed', instance.uuid, dest)
        post_method(context, instance, dest, block_migration, migrate_data)
        return
    if job.paused:
        _resume(job.domain, instance)
    status = 'cancelled' if job.aborted else 'error'
    LOG.warning('Live migration of %s to %s ended (%s): %s', instance.uuid, dest, status,
                error)
    recover_method(context, instance, dest, migrate_data, error=error,
                   migration_status=status)


def _migrate(job: Job, instance: objects.Instance, uri: str, params: dict[str, object],
             flags: int, migration: objects.Migration | None,
             gb: float) -> BaseException | None:
    """Run the migration, monitored until it ends; what failed it (None: done)."""
    # One thread per migration this host runs at once (no limit set: a pool of 16).
    future = executor.submit_to('libvirt-live-migration',
                                CONF.max_concurrent_live_migrations or 16,
                                job.domain.migrateToURI3, uri, params, flags)
    monitor = Monitor(job, instance, migration, gb)
    timer = loopingcall.DynamicLoopingCall(executor.carrying(monitor.tick), future)
    timer.start().wait()
    return future.exception()


class Monitor:
    """Looks at a running migration job: progress, downtime, completion timeout."""

    def __init__(self, job: Job, instance: objects.Instance,
                 migration: objects.Migration | None, gb: float) -> None:
        self.job = job
        self.instance = instance
        self.migration = migration
        self.started = _clock()
        self.steps = downtime_steps(gb)
        self.downtime: int | None = None
        self.timeout = CONF.libvirt.live_migration_completion_timeout * gb
        self.timed_out = False
        self.saved: dict[str, int] = {}
        self.seen_running = False

    def tick(self, future: futures.Future[int]) -> float:
        """One look; ends the looping call once ``future`` (the migration) is done.

        :returns: seconds until the next look (sooner until the job was seen running)
        """
        if future.done():
            raise loopingcall.LoopingCallDone()
        try:
            self.look()
        except Exception:  # noqa: BLE001 - the migration runs on: keep watching it
            LOG.exception('Error monitoring the live migration of %s', self.instance.uuid)
        return MONITOR_INTERVAL if self.seen_running else FIRST_LOOK_INTERVAL

    def look(self) -> None:
        elapsed = _clock() - self.started
        try:
            stats = self.job.domain.jobStats()
        except libvirt.libvirtError as exc:
            LOG.debug('No job statistics for %s: %s', self.instance.uuid, exc)
            return
        # Only a running job has counters (a cancelled or failed one reports zeros).
        if stats.get('type') not in (libvirt.VIR_DOMAIN_JOB_BOUNDED,
                                     libvirt.VIR_DOMAIN_JOB_UNBOUNDED):
            return
        self.seen_running = True
        self.save(stats)
        self.update_downtime(elapsed)
        if self.timeout and not self.timed_out and elapsed > self.timeout:
            self.timed_out = True
            self.on_timeout()

    def save(self, stats: dict[str, int]) -> None:
        counters = {name: int(stats.get(name, 0)) for name in COUNTERS}
        if self.migration is None or counters == self.saved:
            return
        for name, value in counters.items():
            setattr(self.migration, name, value)
        self.migration.save()
        self.saved = counters

    def update_downtime(self, elapsed: float) -> None:
        step = [ms for after, ms in self.steps if elapsed >= after][-1]
        if step == self.downtime:
            return
        try:
            self.job.domain.migrateSetMaxDowntime(step, 0)
        except libvirt.libvirtError as exc:
            LOG.warning('Could not raise the max downtime of %s to %d ms: %s',
                        self.instance.uuid, step, exc)
        self.downtime = step

    def on_timeout(self) -> None:
        action = CONF.libvirt.live_migration_timeout_action
        LOG.warning('Live migration of %s not done after %d s: %s', self.instance.uuid,
                    self.timeout, action)
        try:
            if action == 'force_complete':
                _pause(self.job)
            else:
                _abort(self.job)
        except (libvirt.libvirtError, exception.MigrationError) as exc:
            LOG.warning('Timeout action %s on %s failed: %s', action, self.instance.uuid,
                        exc)


def live_migration_abort(drv: LibvirtDriver, instance: objects.Instance) -> None:
    """:raises MigrationError: no migration of ``instance`` runs here, or it is over"""
    job = _job(instance.uuid)
    if job is None:
        raise exception.MigrationError(
            reason='no live migration of %s runs on this host' % instance.uuid)
    _abort(job)


def _abort(job: Job) -> None:
    job.aborted = True
    try:
        job.domain.abortJob()
    except libvirt.libvirtError as exc:
        raise exception.MigrationError(reason='abort failed: %s' % exc) from exc


def live_migration_force_complete(drv: LibvirtDriver, instance: objects.Instance) -> None:
    """Pause the migrating guest (its memory then converges)."""
    job = _job(instance.uuid)
    if job is None:
        LOG.warning('No live migration of %s runs here to force', instance.uuid)
        return
    try:
        _pause(job)
    except libvirt.libvirtError as exc:
        LOG.warning('Could not pause %s to force its migration: %s', instance.uuid, exc)


def _pause(job: Job) -> None:
    job.domain.suspend()
    job.paused = True


def _resume(domain: libvirt.virDomain, instance: objects.Instance) -> None:
    try:
        if domain.info()[0] == libvirt.VIR_DOMAIN_PAUSED:
            domain.resume()
    except libvirt.libvirtError as exc:
        LOG.warning('Could not resume %s, paused for its failed migration: %s',
                    instance.uuid, exc)


def post_live_migration_at_source(drv: LibvirtDriver, context: RequestContext,
                                  instance: objects.Instance,
                                  network_info: network_model.NetworkInfo,
                                  block_device_info: driver.BlockDeviceInfo | None,
                                  migrate_data: objects.LiveMigrateData) -> None:
    """The guest left: its VIFs here go, and its files unless the folder is shared."""
    with contextlib.suppress(exception.InstanceNotFound, libvirt.libvirtError):
        # UNDEFINE_SOURCE removed it; a definition left behind would come back.
        _domain(drv, instance).undefine()
    drv.unplug_vifs(instance, network_info, ignore_errors=True)
    if not migrate_data.is_shared_instance_path:
        shutil.rmtree(drv.instance_dir(instance), ignore_errors=True)


def _domain(drv: LibvirtDriver, instance: objects.Instance) -> libvirt.virDomain:
    """:raises InstanceNotFound:"""
    try:
        return drv.host.get_connection().lookupByUUIDString(instance.uuid)
    except libvirt.libvirtError as exc:
        if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
            raise exception.InstanceNotFound(instance_id=instance.uuid) from exc
        raise
