"""Live migration on the libvirt driver (``virt/libvirt/live_migration.py``).

libvirt's test driver cannot migrate, so the source's side runs against a domain double
that plays a migration job as libvirt reports it (``migrateToURI3`` blocks until the
job ends; ``jobStats`` gives its counters meanwhile; ``abortJob`` ends it cancelled),
with a driver that never connects (its domain lookups go to the double). The
destination's files (the disks as qcow2 overlays on the image cache's base, the kernel
and ramdisk) are real. tests/devstack/test_live_migration_qemu.py moves a real guest.
"""
from __future__ import annotations

import json
import os
import threading
import xml.etree.ElementTree as ET
from concurrent import futures

import libvirt
import pytest
from oslo_service import loopingcall

from novalite import exception, objects
from novalite.conf import CONF
from novalite.network import model as network_model
from novalite.virt import imagecache
from novalite.virt.libvirt import driver as libvirt_driver
from novalite.virt.libvirt import live_migration, serial
from tests.unit.virt.conftest import make_instance

GiB = 1024 ** 3
MAC = 'fa:16:3e:00:00:01'
PORT_ID = '11111111-2222-3333-4444-555555555555'


def domain_xml(instance_dir: str, serial_port: int = 10000) -> str:
    """A running guest as libvirt shows it: its root disk an overlay in the instance
    folder, a volume, a serial port (repeated as the console), VNC and a NIC."""
    return f"""<domain type='qemu'><name>instance-1</name><devices>
  <disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
    <source file='{instance_dir}/disk'/>
    <backingStore type='file'><format type='raw'/><source file='/base'/></backingStore>
    <target dev='vda' bus='virtio'/></disk>
  <disk type='network' device='disk'><driver name='qemu' type='raw'/>
    <source protocol='rbd' name='volumes/v1'/><target dev='vdb' bus='virtio'/></disk>
  <interface type='ethernet'><mac address='{MAC}'/><target dev='tapold'/>
    <model type='virtio'/></interface>
  <serial type='tcp'><source mode='bind' host='127.0.0.1' service='{serial_port}'/>
    <protocol type='raw'/><target port='0'/></serial>
  <console type='tcp'><source mode='bind' host='127.0.0.1' service='{serial_port}'/>
    <protocol type='raw'/><target type='serial' port='0'/></console>
  <graphics type='vnc' port='5900' autoport='yes' listen='127.0.0.1'>
    <listen type='address' address='127.0.0.1'/></graphics>
</devices></domain>"""


class MigratingDomain:
    """A running domain whose migration job gives ``stats`` to each look, and ends
    when the test says (``finish``), on ``abortJob``, or at once with ``error``."""

    def __init__(self, xml: str, stats: list[dict[str, int]] | None = None,
                 error: str | None = None) -> None:
        self.xml = xml
        self.stats = list(stats or [])
        self.error = error
        self.calls: list[tuple] = []
        self.state = libvirt.VIR_DOMAIN_RUNNING
        self.ended = threading.Event()
        self.cancelled = False
        self.during: list = []

    def XMLDesc(self, flags: int = 0) -> str:
        return self.xml

    def blockInfo(self, dev: str) -> list[int]:
        return [GiB, 200 * 1024, 300 * 1024]

    def migrateToURI3(self, uri: str, params: dict, flags: int) -> int:
        self.calls.append(('migrate', uri, params, flags))
        for action in self.during:
            action()
        if self.error:
            raise libvirt.libvirtError(self.error)
        self.ended.wait(30)
        if self.cancelled:
            raise libvirt.libvirtError("operation aborted: job 'migration out' canceled")
        return 0

    def finish(self) -> None:
        self.ended.set()

    def jobStats(self, flags: int = 0) -> dict[str, int]:
        if not self.stats:
            # The test's counters are all seen: the job ends.
            self.finish()
            return {'type': libvirt.VIR_DOMAIN_JOB_NONE}
        return self.stats.pop(0)

    def migrateSetMaxDowntime(self, ms: int, flags: int = 0) -> int:
        self.calls.append(('downtime', ms))
        return 0

    def abortJob(self) -> int:
        self.calls.append(('abort',))
        self.cancelled = True
        self.finish()
        return 0

    def suspend(self) -> int:
        self.calls.append(('suspend',))
        self.state = libvirt.VIR_DOMAIN_PAUSED
        return 0

    def resume(self) -> int:
        self.calls.append(('resume',))
        self.state = libvirt.VIR_DOMAIN_RUNNING
        return 0

    def info(self) -> list[int]:
        return [self.state, 131072, 131072, 1, 0]


def recording_migration() -> tuple[objects.Migration, list[dict[str, int]]]:
    """A migration whose saves record its counters (no database)."""
    migration = objects.Migration(id=1)
    saved: list[dict[str, int]] = []
    migration.save = lambda: saved.append(  # type: ignore[method-assign]
        {n: getattr(migration, n) for n in live_migration.COUNTERS})
    return migration, saved


class Calls:
    """``post_method`` and ``recover_method``, recording their calls."""

    def __init__(self) -> None:
        self.post: list[tuple] = []
        self.recover: list[tuple] = []

    def post_method(self, context, instance, dest, block_migration, migrate_data) -> None:
        self.post.append((dest, block_migration))

    def recover_method(self, context, instance, dest, migrate_data, error,
                       migration_status) -> None:
        self.recover.append((dest, migration_status, error))


class Plugger:
    def __init__(self) -> None:
        self.plugged: list[str] = []
        self.unplugged: list[str] = []

    def plug(self, instance, vif) -> None:
        self.plugged.append(vif['id'])

    def unplug(self, instance, vif) -> None:
        self.unplugged.append(vif['id'])


def stats(memory_processed: int, disk_processed: int = 0) -> dict[str, int]:
    return {'type': libvirt.VIR_DOMAIN_JOB_UNBOUNDED, 'memory_total': 1000,
            'memory_processed': memory_processed, 'memory_remaining': 1000 - memory_processed,
            'disk_total': 500, 'disk_processed': disk_processed,
            'disk_remaining': 500 - disk_processed}


def vif(devname: str = 'tapnew') -> network_model.VIF:
    return network_model.VIF(id=PORT_ID, address=MAC, devname=devname,
                             network=network_model.Network(id='n1', bridge='br-int'))


@pytest.fixture(autouse=True)
def quick_monitor(monkeypatch):
    monkeypatch.setattr(live_migration, 'MONITOR_INTERVAL', 0.01)


@pytest.fixture
def make_host(tmp_path, monkeypatch):
    """``make_host(name)``: a driver of a host (never connected) whose domain is
    ``host.domain`` once set."""
    domains: dict[int, MigratingDomain | None] = {}

    def lookup(drv, instance):
        domain = domains.get(id(drv))
        if domain is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return domain
    monkeypatch.setattr(live_migration, '_domain', lookup)

    def make(name: str, domain: MigratingDomain | None = None,
             instances_path: str | None = None) -> libvirt_driver.LibvirtDriver:
        drv = libvirt_driver.LibvirtDriver(
            connection_uri='qemu:///system',
            instances_path=instances_path or str(tmp_path / name), vif_plugger=Plugger())
        domains[id(drv)] = domain
        return drv
    make.domains = domains  # type: ignore[attr-defined]
    return make


@pytest.fixture
def instance():
    return make_instance(image_ref='11111111-0000-0000-0000-000000000001')


def migrate_data(migration=None) -> objects.LiveMigrateData:
    return objects.LiveMigrateData.new(migration=migration)


# -- the checks -------------------------------------------------------------------------

def test_the_test_driver_cannot_be_a_destination(make_driver, ctxt, instance):
    with pytest.raises(exception.MigrationPreCheckError, match='test driver'):
        make_driver('host1').check_can_live_migrate_destination(
            ctxt, instance, None, migrate_data())


def test_the_destination_says_where_it_is_reached_and_which_storage_it_has(
        make_host, ctxt, instance):
    CONF.set_override('live_migration_inbound_addr', '192.0.2.7', 'libvirt')
    try:
        dest = make_host('dest')
        data = dest.check_can_live_migrate_destination(ctxt, instance, None, migrate_data())
    finally:
        CONF.clear_override('live_migration_inbound_addr', 'libvirt')
    assert data.target_connect_addr == '192.0.2.7'
    assert data.block_migration is None
    assert data.driver_data[live_migration.STORAGE_ID] == live_migration.storage_id(
        dest.instances_path)
    assert data.driver_data[live_migration.VNC_LISTEN_ADDR] == CONF.vnc.server_listen


def test_separate_folders_mean_a_block_migration_of_the_local_disks(
        make_host, ctxt, instance):
    source = make_host('source')
    make_host.domains[id(source)] = MigratingDomain(domain_xml(source.instance_dir(instance)))
    dest = make_host('dest')
    data = dest.check_can_live_migrate_destination(ctxt, instance, None, migrate_data())
    data = source.check_can_live_migrate_source(ctxt, instance, data)
    assert data.block_migration is True
    assert not data.is_shared_instance_path and not data.is_shared_block_storage
    # The root disk only: the volume is shared storage.
    assert json.loads(data.driver_data[live_migration.DISKS]) == [
        {'name': 'disk', 'target': 'vda', 'format': 'qcow2', 'size': GiB,
         'backing_format': 'raw'}]
    assert data.driver_data[live_migration.SERIAL_PORT_COUNT] == '1'
    with pytest.raises(exception.MigrationPreCheckError, match='needs the instances'):
        source.check_can_live_migrate_source(
            ctxt, instance, dest.check_can_live_migrate_destination(
                ctxt, instance, False, migrate_data()))


def test_a_shared_folder_means_no_block_migration(make_host, ctxt, instance, tmp_path):
    shared = str(tmp_path / 'shared')
    source = make_host('source', instances_path=shared)
    make_host.domains[id(source)] = MigratingDomain(domain_xml(source.instance_dir(instance)))
    dest = make_host('dest', instances_path=shared)
    data = source.check_can_live_migrate_source(
        ctxt, instance, dest.check_can_live_migrate_destination(
            ctxt, instance, None, migrate_data()))
    assert data.is_shared_instance_path and data.block_migration is False
    with pytest.raises(exception.MigrationPreCheckError, match='shared storage'):
        source.check_can_live_migrate_source(
            ctxt, instance, dest.check_can_live_migrate_destination(
                ctxt, instance, True, migrate_data()))


def test_a_server_without_local_disks_moves_without_block_migration(
        make_host, ctxt, instance):
    source = make_host('source')
    volume_only = ET.fromstring(domain_xml(source.instance_dir(instance)))
    devices = volume_only.find('devices')
    devices.remove(devices.find("disk[@type='file']"))
    make_host.domains[id(source)] = MigratingDomain(ET.tostring(volume_only, 'unicode'))
    data = source.check_can_live_migrate_source(
        ctxt, instance, make_host('dest').check_can_live_migrate_destination(
            ctxt, instance, None, migrate_data()))
    assert data.is_shared_block_storage and data.block_migration is False


# -- the destination ----------------------------------------------------------------------

@pytest.fixture
def serial_consoles():
    CONF.set_override('enabled', True, 'serial_console')
    CONF.set_override('port_range', '10400:10500', 'serial_console')
    try:
        yield
    finally:
        CONF.clear_override('enabled', 'serial_console')
        CONF.clear_override('port_range', 'serial_console')


def prepared(make_host, ctxt, instance, tmp_path):
    """A destination after ``pre_live_migration`` of a block migration."""
    dest = make_host('dest')
    for image_id in (instance.image_ref, 'kernel-image'):
        path = imagecache.ImageCache(dest.instances_path, None).path(image_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.truncate(1024 * 1024)
    instance.system_metadata = {'image_kernel_id': 'kernel-image'}
    data = migrate_data()
    data.driver_data = {live_migration.DISKS: json.dumps([
        {'name': 'disk', 'target': 'vda', 'format': 'qcow2', 'size': GiB,
         'backing_format': 'raw'},
        {'name': 'disk.eph0', 'target': 'vdc', 'format': 'qcow2', 'size': GiB,
         'backing_format': None}]), live_migration.SERIAL_PORT_COUNT: '1'}
    data = dest.pre_live_migration(ctxt, instance, [vif()], None, data)
    return dest, data


def test_the_destination_makes_the_disks_takes_a_serial_port_and_plugs(
        make_host, ctxt, instance, tmp_path, serial_consoles):
    dest, data = prepared(make_host, ctxt, instance, tmp_path)
    directory = dest.instance_dir(instance)
    assert sorted(os.listdir(directory)) == ['disk', 'disk.eph0', 'kernel']
    root = dest.image_backend.info(os.path.join(directory, 'disk'))
    assert root['format'] == 'qcow2' and root['virtual-size'] == GiB
    assert root['backing-filename'] == dest.image_cache.path(instance.image_ref)
    assert dest.image_backend.info(os.path.join(directory, 'disk.eph0'))['virtual-size'] == GiB
    port = int(data.driver_data[live_migration.SERIAL_LISTEN_PORTS])
    assert ('127.0.0.1', port) in serial.held_ports()
    assert dest.vif_plugger.plugged == [PORT_ID]

    dest.rollback_live_migration_at_destination(ctxt, instance, [vif()], None, True, data)
    assert not os.path.exists(directory)
    assert ('127.0.0.1', port) not in serial.held_ports()
    assert dest.vif_plugger.unplugged == [PORT_ID]
    # Again: nothing left to remove, and no error.
    dest.rollback_live_migration_at_destination(ctxt, instance, [vif()], None, True, data)


def test_the_destination_xml_has_the_destinations_ports_and_taps(tmp_path):
    data = migrate_data()
    data.driver_data = {live_migration.SERIAL_LISTEN_ADDR: '10.0.0.2',
                        live_migration.SERIAL_LISTEN_PORTS: '10007',
                        live_migration.VNC_LISTEN_ADDR: '10.0.0.3'}
    data.dest_network_info = network_model.NetworkInfo([vif('tapdest')])
    domain = ET.fromstring(live_migration.destination_xml(domain_xml('/i'), data))
    for path in ("devices/serial/source", "devices/console/source"):
        source = domain.find(path)
        assert (source.get('host'), source.get('service')) == ('10.0.0.2', '10007')
    graphics = domain.find('devices/graphics')
    assert graphics.get('listen') == '10.0.0.3'
    assert graphics.find('listen').get('address') == '10.0.0.3'
    assert domain.find('devices/interface/target').get('dev') == 'tapdest'
    assert domain.find("devices/disk/source").get('file') == '/i/disk'


def test_the_uris(monkeypatch):
    data = migrate_data()
    assert live_migration.destination_uri('hostB', data) == 'qemu+tcp://hostB/system'
    data.target_connect_addr = 'fd00::2'
    assert live_migration.destination_uri('hostB', data) == 'qemu+tcp://[fd00::2]/system'
    assert live_migration.migrate_params('<x/>', [], data)[
        libvirt.VIR_MIGRATE_PARAM_URI] == 'tcp://[fd00::2]'
    CONF.set_override('live_migration_uri', 'qemu+unix:///system?socket=/s/%s/sock',
                      'libvirt')
    try:
        data.target_connect_addr = '127.0.0.2'
        assert live_migration.destination_uri('hostB', data) == \
            'qemu+unix:///system?socket=/s/127.0.0.2/sock'
    finally:
        CONF.clear_override('live_migration_uri', 'libvirt')


def test_downtime_steps_rise_to_the_configured_downtime():
    CONF.set_override('live_migration_downtime', 400, 'libvirt')
    CONF.set_override('live_migration_downtime_delay', 30, 'libvirt')
    try:
        steps = live_migration.downtime_steps(3)
    finally:
        CONF.clear_override('live_migration_downtime', 'libvirt')
        CONF.clear_override('live_migration_downtime_delay', 'libvirt')
    assert steps[:3] == [(0, 40), (90, 76), (180, 112)]
    assert steps[-1] == (900, 400) and len(steps) == 11


# -- the source -------------------------------------------------------------------------

def run(make_host, ctxt, instance, domain, block_migration=True, migration=None):
    source = make_host('source')
    make_host.domains[id(source)] = domain
    data = migrate_data(migration)
    data.target_connect_addr = '127.0.0.2'
    data.driver_data = {live_migration.SERIAL_LISTEN_ADDR: '127.0.0.1',
                        live_migration.SERIAL_LISTEN_PORTS: '10401'}
    calls = Calls()
    source.live_migration(ctxt, instance, 'hostB', calls.post_method, calls.recover_method,
                          block_migration, data)
    return source, calls


def test_a_block_migration_reports_its_progress_and_ends_in_post(make_host, ctxt, instance,
                                                                  tmp_path):
    domain = MigratingDomain(domain_xml(str(tmp_path / 'source' / instance.uuid), 10402),
                             stats=[stats(100), stats(100), stats(600, 500)])
    serial.reserve_ports([('127.0.0.1', 10402)])
    migration, saved = recording_migration()
    run(make_host, ctxt, instance, domain, migration=migration)
    (_, uri, params, flags), = [c for c in domain.calls if c[0] == 'migrate']
    assert uri == 'qemu+tcp://127.0.0.2/system'
    assert flags == (libvirt.VIR_MIGRATE_LIVE | libvirt.VIR_MIGRATE_PEER2PEER |
                     libvirt.VIR_MIGRATE_UNDEFINE_SOURCE | libvirt.VIR_MIGRATE_PERSIST_DEST |
                     libvirt.VIR_MIGRATE_NON_SHARED_INC)
    assert params[libvirt.VIR_MIGRATE_PARAM_URI] == 'tcp://127.0.0.2'
    assert params[libvirt.VIR_MIGRATE_PARAM_MIGRATE_DISKS] == ['vda']
    dest_xml = params[libvirt.VIR_MIGRATE_PARAM_DEST_XML]
    assert params[libvirt.VIR_MIGRATE_PARAM_PERSIST_XML] == dest_xml
    assert "service='10401'" in dest_xml.replace('"', "'")
    # Each change of the counters saved once.
    assert [(s['memory_processed'], s['disk_processed']) for s in saved] == [
        (100, 0), (600, 500)]
    assert saved[-1]['memory_remaining'] == 400
    assert ('downtime', 50) in domain.calls
    assert ('127.0.0.1', 10402) not in serial.held_ports()


def test_post_method_is_called_once_when_the_guest_moved(make_host, ctxt, instance):
    domain = MigratingDomain(domain_xml('/elsewhere'))
    _, calls = run(make_host, ctxt, instance, domain, block_migration=False)
    assert calls.post == [('hostB', False)] and calls.recover == []
    (_, _, params, flags), = [c for c in domain.calls if c[0] == 'migrate']
    assert not flags & libvirt.VIR_MIGRATE_NON_SHARED_INC
    assert libvirt.VIR_MIGRATE_PARAM_MIGRATE_DISKS not in params


def test_a_failed_migration_is_recovered_as_an_error(make_host, ctxt, instance):
    domain = MigratingDomain(domain_xml('/i'), error='unable to connect to server')
    _, calls = run(make_host, ctxt, instance, domain)
    (dest, status, error), = calls.recover
    assert calls.post == [] and (dest, status) == ('hostB', 'error')
    assert 'unable to connect' in str(error)


def test_an_abort_cancels_the_job(make_host, ctxt, instance):
    domain = MigratingDomain(domain_xml('/i'), stats=[stats(1)] * 1000)
    source = make_host('source')
    domain.during.append(lambda: source.live_migration_abort(instance))
    make_host.domains[id(source)] = domain
    calls = Calls()
    source.live_migration(ctxt, instance, 'hostB', calls.post_method, calls.recover_method,
                          True, migrate_data())
    assert ('abort',) in domain.calls
    assert [(d, s) for d, s, _ in calls.recover] == [('hostB', 'cancelled')]
    with pytest.raises(exception.MigrationError, match='no live migration'):
        source.live_migration_abort(instance)


def test_a_forced_migration_pauses_the_guest_and_resumes_it_if_it_fails(
        make_host, ctxt, instance):
    domain = MigratingDomain(domain_xml('/i'), error='connection reset')
    source = make_host('source')
    domain.during.append(lambda: source.live_migration_force_complete(instance))
    make_host.domains[id(source)] = domain
    calls = Calls()
    source.live_migration(ctxt, instance, 'hostB', calls.post_method, calls.recover_method,
                          True, migrate_data())
    assert [c for c in domain.calls if c[0] in ('suspend', 'resume')] == [
        ('suspend',), ('resume',)]
    assert [(d, s) for d, s, _ in calls.recover] == [('hostB', 'error')]
    # No migration runs: nothing to force.
    source.live_migration_force_complete(instance)


@pytest.mark.parametrize('action,expected', [('abort', ('abort',)),
                                             ('force_complete', ('suspend',))])
def test_the_completion_timeout_takes_its_action(make_host, ctxt, instance, monkeypatch,
                                                 action, expected):
    clock = iter(range(0, 10 ** 6, 1000))
    monkeypatch.setattr(live_migration, '_clock', lambda: next(clock))
    CONF.set_override('live_migration_timeout_action', action, 'libvirt')
    try:
        domain = MigratingDomain(domain_xml('/i'), stats=[stats(n) for n in range(1, 6)])
        _, calls = run(make_host, ctxt, instance, domain)
    finally:
        CONF.clear_override('live_migration_timeout_action', 'libvirt')
    assert [c for c in domain.calls if c == expected] == [expected]
    if action == 'abort':
        assert [s for _, s, _ in calls.recover] == ['cancelled']
    else:
        assert calls.post == [('hostB', True)]


def test_after_the_move_the_source_removes_its_files_unless_shared(make_host, ctxt,
                                                                   instance):
    source = make_host('source')
    directory = source.instance_dir(instance)
    os.makedirs(directory)
    data = migrate_data()
    data.is_shared_instance_path = True
    source.post_live_migration_at_source(ctxt, instance, [vif()], None, data)
    assert os.path.isdir(directory)
    data.is_shared_instance_path = False
    source.post_live_migration_at_source(ctxt, instance, [vif()], None, data)
    assert not os.path.exists(directory)
    assert source.vif_plugger.unplugged == [PORT_ID, PORT_ID]


def test_the_storage_id_is_made_once(tmp_path):
    first = live_migration.storage_id(str(tmp_path / 'a'))
    assert live_migration.storage_id(str(tmp_path / 'a')) == first
    assert live_migration.storage_id(str(tmp_path / 'b')) != first


def test_a_progress_that_cannot_be_saved_does_not_stop_the_migration(make_host, ctxt,
                                                                     instance):
    migration = objects.Migration(id=1)

    def save() -> None:
        raise exception.NovaliteException('the conductor is away')
    migration.save = save  # type: ignore[method-assign]
    domain = MigratingDomain(domain_xml('/i'), stats=[stats(1), stats(2)])
    _, calls = run(make_host, ctxt, instance, domain, migration=migration)
    assert calls.post == [('hostB', True)] and calls.recover == []


def test_the_monitor_looks_often_until_the_job_runs_then_every_interval(instance):
    """A migration that ends within one MONITOR_INTERVAL of its start still has its
    counters saved: until the job is first seen running, the monitor looks every
    FIRST_LOOK_INTERVAL."""
    running = {'type': libvirt.VIR_DOMAIN_JOB_UNBOUNDED, 'memory_total': 128 * 1024 * 1024,
               'memory_processed': 1, 'memory_remaining': 2}
    domain = MigratingDomain('<domain/>', stats=[{'type': libvirt.VIR_DOMAIN_JOB_NONE},
                                                 running])
    job = live_migration.Job(domain)
    monitor = live_migration.Monitor(job, instance, None, 1.0)
    pending: futures.Future[int] = futures.Future()
    assert monitor.tick(pending) == live_migration.FIRST_LOOK_INTERVAL
    assert monitor.tick(pending) == live_migration.MONITOR_INTERVAL
    assert monitor.seen_running
    pending.set_result(0)
    with pytest.raises(loopingcall.LoopingCallDone):
        monitor.tick(pending)
