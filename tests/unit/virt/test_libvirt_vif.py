"""VIFs of the libvirt driver: the os-vif objects, the guest's NIC, the wait for
Neutron's events, and a real plug into a private Open vSwitch in a network namespace.

Run as a script (``python -m tests.unit.virt.test_libvirt_vif CONF plug|unplug VIF
INSTANCE``) it plugs or unplugs one VIF through ``vif.py``: the OVS test runs it inside
the test's namespace, where the tap must be made.
"""
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator

import pytest
from os_vif.objects import vif as osv_vif

from novalite import exception, objects
from novalite.compute import power_state
from novalite.conf import CONF
from novalite.network import model
from novalite.virt.libvirt import config
from novalite.virt.libvirt import driver as libvirt_driver
from novalite.virt.libvirt import vif as libvirt_vif
from tests.unit.virt.conftest import make_instance, write_node

REPO = pathlib.Path(__file__).resolve().parents[3]
PORT = '3f6c1a2e-9b0d-4c55-8a77-0e1f2d3c4b5a'
NETWORK = 'd2b1c0a9-8e7f-4a6b-9c5d-1e2f3a4b5c6d'


def make_vif(port_id: str = PORT, mac: str = 'fa:16:3e:12:34:56', mtu: int | None = 1442,
             active: bool = False, vif_type: str = model.VIF_TYPE_OVS) -> model.VIF:
    """A VIF as the network API builds it for a port ML2/OVN bound to this host."""
    meta: dict = {'tunneled': True}
    if mtu is not None:
        meta['mtu'] = mtu
    return model.VIF(
        id=port_id, address=mac, type=vif_type, devname=model.devname(port_id),
        ovs_interfaceid=port_id, vnic_type='normal', active=active,
        details={'port_filter': True, 'connectivity': 'l2', 'ovs_create_tap': True,
                 'bridge_name': 'br-int', 'datapath_type': 'netdev'},
        profile={}, preserve_on_delete=False, tag=None,
        network=model.Network(
            id=NETWORK, label='private', bridge='br-int', meta=meta,
            subnets=[model.Subnet(
                cidr='10.0.0.0/24', version=4,
                gateway=model.IP(address='10.0.0.1', type='gateway', version=4),
                dns=[model.IP(address='10.0.0.2', type='dns', version=4)],
                ips=[model.IP(address='10.0.0.5', type='fixed', version=4,
                              floating_ips=[model.IP(address='172.24.4.9',
                                                     type='floating', version=4)])],
                routes=[])]))


class RecordingPlugger:
    """Test double of os-vif: records the plugs and unplugs, in order, and which ports
    are plugged now. ``unplug_error`` makes unplugging fail, as an unreachable OVS
    database would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.plugged: set[str] = set()
        self.unplug_error: Exception | None = None

    def plug(self, instance: objects.Instance, vif: model.VIF) -> None:
        self.calls.append(('plug', vif['id']))
        self.plugged.add(vif['id'])

    def unplug(self, instance: objects.Instance, vif: model.VIF) -> None:
        self.calls.append(('unplug', vif['id']))
        if self.unplug_error is not None:
            raise self.unplug_error
        self.plugged.discard(vif['id'])


class RecordingVirtAPI:
    """Test double of the compute manager's virtapi: records the events the driver asks
    to wait for, and what was plugged and defined when the wait ended. ``fail_event``
    makes it report that event as failed, as Neutron's ``status: failed`` would."""

    def __init__(self, drv: libvirt_driver.LibvirtDriver, plugger: RecordingPlugger,
                 fail_event: str | None = None) -> None:
        self.drv, self.plugger, self.fail_event = drv, plugger, fail_event
        self.waits: list[dict] = []

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance: objects.Instance,
                                events: list[tuple[str, str]], deadline: int,
                                error_callback: Callable[[str, objects.Instance], None]
                                ) -> Iterator[None]:
        wait = {'events': list(events), 'deadline': deadline}
        self.waits.append(wait)
        yield
        wait['plugged_at_end'] = set(self.plugger.plugged)
        guest = self.drv.host.get_guest(instance.uuid)
        wait['running_at_end'] = guest.is_active()
        if self.fail_event is not None:
            error_callback(self.fail_event, instance)


@pytest.fixture
def plugger() -> RecordingPlugger:
    return RecordingPlugger()


@pytest.fixture
def drv(tmp_path, test_virt_type, plugger):
    driver = libvirt_driver.LibvirtDriver(
        connection_uri=write_node(tmp_path / 'host1.xml'),
        instances_path=str(tmp_path / 'host1'), vif_plugger=plugger)
    driver.init_host('host1')
    yield driver
    driver.cleanup_host('host1')


def _spawn(drv: libvirt_driver.LibvirtDriver, network_info: model.NetworkInfo
           ) -> objects.Instance:
    instance = make_instance()
    drv.spawn(None, instance, None, [], None, {}, network_info=network_info)
    return instance


def _interfaces(drv: libvirt_driver.LibvirtDriver, instance: objects.Instance
                ) -> list[ET.Element]:
    domain = ET.fromstring(drv.host.get_guest(instance.uuid).xml())
    return domain.findall('devices/interface')


# -- the os-vif objects -----------------------------------------------------------------

def test_an_ovs_vif_becomes_a_vif_open_vswitch_that_creates_its_tap_and_port():
    obj = libvirt_vif.os_vif_vif(make_vif())
    assert isinstance(obj, osv_vif.VIFOpenVSwitch)
    assert (obj.id, obj.address, obj.plugin) == (PORT, 'fa:16:3e:12:34:56', 'ovs')
    assert obj.vif_name == 'tap3f6c1a2e-9b' == model.devname(PORT)
    assert obj.bridge_name == 'br-int'
    assert obj.has_traffic_filtering and not obj.active
    profile = obj.port_profile
    assert isinstance(profile, osv_vif.VIFPortProfileOpenVSwitch)
    assert profile.interface_id == PORT
    assert profile.datapath_type == 'netdev'
    assert profile.create_port and profile.create_tap


def test_the_network_carries_bridge_mtu_and_subnets():
    network = libvirt_vif.os_vif_vif(make_vif()).network
    assert (str(network.id), network.bridge, network.label, network.mtu) == (
        NETWORK, 'br-int', 'private', 1442)
    [subnet] = network.subnets.objects
    assert str(subnet.cidr) == '10.0.0.0/24'
    assert str(subnet.gateway) == '10.0.0.1'
    assert [str(a) for a in subnet.dns] == ['10.0.0.2']
    [fixed] = subnet.ips.objects
    assert str(fixed.address) == '10.0.0.5'
    assert [str(a) for a in fixed.floating_ips] == ['172.24.4.9']


def test_without_an_mtu_os_vif_uses_its_default_and_the_bridge_falls_back():
    vif = make_vif(mtu=None)
    vif['network']['bridge'] = None
    network = libvirt_vif.os_vif_vif(vif).network
    assert network.mtu is None
    assert network.bridge == 'br-int'  # the binding's bridge_name


def test_instance_info():
    instance = make_instance(instance_id=10)
    info = libvirt_vif.os_vif_instance(instance)
    assert (info.uuid, info.name, info.project_id) == (instance.uuid, 'instance-0000000a',
                                                       'p1')


@pytest.mark.parametrize('vif_type', [model.VIF_TYPE_BINDING_FAILED, model.VIF_TYPE_UNBOUND])
def test_a_port_whose_binding_failed_cannot_be_plugged(vif_type):
    vif = make_vif(vif_type=vif_type)
    with pytest.raises(exception.VirtualInterfaceCreateException, match=vif_type):
        libvirt_vif.os_vif_vif(vif)
    with pytest.raises(exception.VirtualInterfaceCreateException):
        libvirt_vif.plug(make_instance(), vif)
    libvirt_vif.unplug(make_instance(), vif)  # nothing was plugged: nothing to do


def test_hybrid_plugging_and_other_vnic_types_are_refused():
    vif = make_vif()
    vif['details']['ovs_hybrid_plug'] = True
    with pytest.raises(exception.VirtualInterfaceCreateException, match='hybrid'):
        libvirt_vif.os_vif_vif(vif)
    vif = make_vif()
    vif['vnic_type'] = 'direct'
    with pytest.raises(exception.VirtualInterfaceCreateException, match='direct'):
        libvirt_vif.os_vif_vif(vif)


# -- the guest's NIC ------------------------------------------------------------------

def test_spawn_defines_an_ethernet_nic_on_the_unmanaged_tap(drv, plugger):
    second = make_vif(port_id='0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', mac='fa:16:3e:00:00:02',
                      mtu=None)
    instance = _spawn(drv, [make_vif(), second])
    first, other = _interfaces(drv, instance)
    assert first.get('type') == 'ethernet'
    assert first.find('mac').get('address') == 'fa:16:3e:12:34:56'
    target = first.find('target')
    assert (target.get('dev'), target.get('managed')) == ('tap3f6c1a2e-9b', 'no')
    assert first.find('model').get('type') == 'virtio'
    assert first.find('mtu').get('size') == '1442'
    assert other.find('target').get('dev') == 'tap0a1b2c3d-4e'
    assert other.find('mtu') is None
    assert plugger.calls == [('plug', PORT), ('plug', second['id'])]
    assert drv.get_info(instance).state == power_state.RUNNING


def test_a_nic_on_the_userspace_datapath_leaves_no_checksum_to_the_host(drv, plugger):
    """OVS's netdev datapath does not complete offloaded checksums: the guest makes
    them (QEMU's csum=off); on the kernel datapath the offload stays."""
    kernel = make_vif(port_id='0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', mac='fa:16:3e:00:00:02')
    kernel['details'] = dict(kernel['details'], datapath_type='system')
    first, other = _interfaces(drv, _spawn(drv, [make_vif(), kernel]))
    assert (first.find('driver').get('name'), first.find('driver/host').get('csum')) == (
        'qemu', 'off')
    assert other.find('driver') is None
    attached = ET.fromstring(config.interface_xml(libvirt_vif.guest_interface(make_vif())))
    assert attached.find('driver/host').get('csum') == 'off'


def test_spawn_without_network_info_has_no_nic(drv, plugger):
    instance = _spawn(drv, [])
    assert _interfaces(drv, instance) == []
    assert plugger.calls == []


def test_spawn_refuses_a_port_whose_binding_failed_before_plugging(drv, plugger):
    with pytest.raises(exception.VirtualInterfaceCreateException):
        _spawn(drv, [make_vif(vif_type=model.VIF_TYPE_BINDING_FAILED)])
    assert plugger.calls == []
    assert drv.list_instance_uuids() == []


# -- waiting for network-vif-plugged ----------------------------------------------------

def test_spawn_waits_for_the_inactive_ports_then_starts_the_guest(drv, plugger):
    virtapi = drv.virtapi = RecordingVirtAPI(drv, plugger)
    already_up = make_vif(port_id='0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', active=True)
    CONF.set_override('vif_plugging_timeout', 42)
    try:
        instance = _spawn(drv, [make_vif(active=False), already_up])
    finally:
        CONF.clear_override('vif_plugging_timeout')
    [wait] = virtapi.waits
    assert wait['events'] == [('network-vif-plugged', PORT)]
    assert wait['deadline'] == 42
    # Plugged (and defined) inside the wait, started only after it.
    assert wait['plugged_at_end'] == {PORT, already_up['id']}
    assert wait['running_at_end'] is False
    assert drv.get_info(instance).state == power_state.RUNNING


@pytest.mark.parametrize('timeout, active', [(0, False), (300, True)])
def test_no_wait_when_waiting_is_off_or_every_port_is_active(drv, plugger, timeout, active):
    virtapi = drv.virtapi = RecordingVirtAPI(drv, plugger)
    CONF.set_override('vif_plugging_timeout', timeout)
    try:
        instance = _spawn(drv, [make_vif(active=active)])
    finally:
        CONF.clear_override('vif_plugging_timeout')
    assert virtapi.waits == []
    assert plugger.plugged == {PORT}
    assert drv.get_info(instance).state == power_state.RUNNING


def test_no_virtapi_plugs_and_starts(drv, plugger):
    assert drv.virtapi is None
    instance = _spawn(drv, [make_vif(active=False)])
    assert plugger.plugged == {PORT}
    assert drv.get_info(instance).state == power_state.RUNNING


def test_a_failed_event_fails_the_spawn_and_unplugs(drv, plugger):
    drv.virtapi = RecordingVirtAPI(drv, plugger, fail_event='network-vif-plugged')
    with pytest.raises(exception.VirtualInterfaceCreateException, match='network-vif'):
        _spawn(drv, [make_vif(active=False)])
    assert plugger.calls == [('plug', PORT), ('unplug', PORT)]
    [uuid_] = drv.list_instance_uuids()
    assert not drv.host.get_guest(uuid_).is_active()


def test_a_failed_event_is_not_fatal_when_configured_so(drv, plugger):
    drv.virtapi = RecordingVirtAPI(drv, plugger, fail_event='network-vif-plugged')
    CONF.set_override('vif_plugging_is_fatal', False)
    try:
        instance = _spawn(drv, [make_vif(active=False)])
    finally:
        CONF.clear_override('vif_plugging_is_fatal')
    assert drv.get_info(instance).state == power_state.RUNNING


# -- unplugging and re-plugging ---------------------------------------------------------

def test_destroy_unplugs_and_tolerates_an_unplug_failure(drv, plugger):
    network_info = [make_vif()]
    instance = _spawn(drv, network_info)
    drv.destroy(None, instance, network_info=network_info)
    assert plugger.calls[-1] == ('unplug', PORT)
    assert plugger.plugged == set()
    plugger.unplug_error = exception.NovaliteException('the OVS database is gone')
    drv.destroy(None, instance, network_info=network_info)  # logs, does not raise


def test_hard_reboot_and_power_on_plug_again(drv, plugger):
    network_info = [make_vif()]
    instance = _spawn(drv, network_info)
    drv.reboot(None, instance, network_info=network_info, reboot_type='HARD')
    drv.power_off(instance)
    drv.power_on(None, instance, network_info=network_info)
    assert plugger.calls == [('plug', PORT)] * 3
    assert drv.get_info(instance).state == power_state.RUNNING


def test_resize_unplugs_on_the_source_and_plugs_on_the_destination(drv, plugger):
    network_info = [make_vif()]
    instance = _spawn(drv, network_info)
    disk_info = drv.migrate_disk_and_power_off(None, instance, 'host1', instance.flavor,
                                               network_info=network_info)
    assert plugger.plugged == set()
    drv.finish_migration(None, None, instance, disk_info, network_info, None, False, {})
    assert plugger.plugged == {PORT}
    assert [i.find('target').get('dev') for i in _interfaces(drv, instance)] == [
        'tap3f6c1a2e-9b']
    assert drv.get_info(instance).state == power_state.RUNNING


# -- a real plug into Open vSwitch (userspace datapath) in a network namespace ----------

OVS_TOOLS = ('ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd', 'ovs-vsctl', 'ovs-appctl', 'ip')
needs_ovs = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in OVS_TOOLS)
    or not os.path.exists('/usr/share/openvswitch/vswitch.ovsschema'),
    reason='needs root and Open vSwitch (ovsdb-server, ovs-vswitchd, ovs-vsctl)')


class PrivateOvs:
    """ovsdb-server and ovs-vswitchd of the test's own, in network namespace ``netns``,
    with ``br-int`` on the netdev datapath. Nothing of it touches the root namespace or
    another OVS: ``br-int`` and ``ovs-netdev`` exist only in ``netns``."""

    def __init__(self, rundir: pathlib.Path) -> None:
        self.netns = 'nlvif-%s' % uuid.uuid4().hex[:8]
        self.rundir = rundir
        self.db = 'unix:%s' % (rundir / 'db.sock')
        self.env = dict(os.environ, OVS_RUNDIR=str(rundir), OVS_DBDIR=str(rundir),
                        OVS_LOGDIR=str(rundir))

    def in_netns(self, *argv: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(['ip', 'netns', 'exec', self.netns, *argv], check=True,
                              capture_output=True, text=True, env=self.env, timeout=60,
                              **kwargs)

    def vsctl(self, *argv: str) -> str:
        return self.in_netns('ovs-vsctl', '--db=%s' % self.db, '--timeout=10',
                             *argv).stdout.strip()

    def start(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        subprocess.run(['ip', 'netns', 'add', self.netns], check=True)
        subprocess.run(['ip', '-n', self.netns, 'link', 'set', 'lo', 'up'], check=True)
        subprocess.run(['ovsdb-tool', 'create', str(self.rundir / 'conf.db'),
                        '/usr/share/openvswitch/vswitch.ovsschema'], check=True)
        self.in_netns('ovsdb-server', str(self.rundir / 'conf.db'),
                      '--remote=punix:%s' % (self.rundir / 'db.sock'),
                      *self._daemon_args('ovsdb-server'))
        self.vsctl('--no-wait', 'init')
        self.in_netns('ovs-vswitchd', self.db, *self._daemon_args('ovs-vswitchd'))
        self.vsctl('--may-exist', 'add-br', 'br-int', '--', 'set', 'Bridge', 'br-int',
                   'datapath_type=netdev', 'fail-mode=secure')

    def _daemon_args(self, name: str) -> list[str]:
        return ['--pidfile=%s' % (self.rundir / ('%s.pid' % name)),
                '--unixctl=%s' % (self.rundir / ('%s.ctl' % name)),
                '--log-file=%s' % (self.rundir / ('%s.log' % name)),
                '--detach', '--no-chdir']

    def stop(self) -> None:
        """Remove br-int, stop both daemons (by their pids), delete the namespace."""
        if (self.rundir / 'db.sock').exists():
            with contextlib.suppress(subprocess.SubprocessError):
                self.vsctl('--if-exists', 'del-br', 'br-int')
        for name in ('ovs-vswitchd', 'ovsdb-server'):
            _stop_pid(self.rundir / ('%s.pid' % name))
        subprocess.run(['ip', 'netns', 'del', self.netns], check=False)


def _stop_pid(pidfile: pathlib.Path) -> None:
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text().strip())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, 9)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its (adopting) parent to reap it."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


@pytest.fixture
def private_ovs(tmp_path):
    ovs = PrivateOvs(tmp_path / 'ovs')
    try:
        ovs.start()
        yield ovs
    finally:
        ovs.stop()


def _run_vif_py(ovs: PrivateOvs, tmp_path: pathlib.Path, action: str, vif: model.VIF,
                instance: objects.Instance) -> None:
    """Plug or unplug through vif.py in a child process inside the namespace, with
    ``[os_vif_ovs] ovsdb_connection`` from a novalite.conf."""
    conf = tmp_path / 'novalite.conf'
    conf.write_text('[os_vif_ovs]\novsdb_connection = %s\novs_vsctl_timeout = 20\n'
                    % ovs.db)
    ovs.in_netns(sys.executable, '-m', 'tests.unit.virt.test_libvirt_vif', str(conf),
                 action, json.dumps(vif),
                 json.dumps({'uuid': instance.uuid, 'id': instance.id,
                             'project_id': instance.project_id}),
                 cwd=str(REPO))


def _link(ovs: PrivateOvs, dev: str) -> dict | None:
    out = subprocess.run(['ip', '-n', ovs.netns, '-j', 'link', 'show', 'dev', dev],
                         capture_output=True, text=True)
    return json.loads(out.stdout)[0] if out.returncode == 0 else None


@needs_ovs
def test_plug_and_unplug_in_a_private_ovs(private_ovs, tmp_path):
    vif, instance = make_vif(mac='fa:16:3e:ab:cd:ef', mtu=1442), make_instance()
    tap = vif['devname']
    _run_vif_py(private_ovs, tmp_path, 'plug', vif, instance)

    link = _link(private_ovs, tap)
    assert link is not None
    assert (link['address'], link['mtu']) == ('fa:16:3e:ab:cd:ef', 1442)
    assert 'UP' in link['flags']
    disable_ipv6 = '/proc/sys/net/ipv6/conf/%s/disable_ipv6' % tap
    if os.path.exists('/proc/sys/net/ipv6'):
        assert private_ovs.in_netns('cat', disable_ipv6).stdout.strip() == '1'
    assert private_ovs.vsctl('port-to-br', tap) == 'br-int'
    ids = json.loads(private_ovs.vsctl('--format=json', '--columns=external_ids', 'list',
                                       'Interface', tap))['data'][0][0][1]
    assert dict(ids) == {'iface-id': PORT, 'attached-mac': 'fa:16:3e:ab:cd:ef',
                         'vm-uuid': instance.uuid, 'iface-status': 'active'}
    # ovs-vswitchd opened the tap (it was created after the port was added).
    assert private_ovs.vsctl('get', 'Interface', tap, 'error') == '[]'
    assert int(private_ovs.vsctl('get', 'Interface', tap, 'ofport')) > 0

    _run_vif_py(private_ovs, tmp_path, 'plug', vif, instance)  # again: no change
    assert private_ovs.vsctl('list-ports', 'br-int') == tap

    _run_vif_py(private_ovs, tmp_path, 'unplug', vif, instance)
    assert _link(private_ovs, tap) is None
    assert private_ovs.vsctl('list-ports', 'br-int') == ''
    _run_vif_py(private_ovs, tmp_path, 'unplug', vif, instance)  # gone already: fine


def _child(argv: list[str]) -> None:
    """``CONF plug|unplug VIF-JSON INSTANCE-JSON``: see the module docstring."""
    conf_file, action, vif_json, instance_json = argv
    CONF(['--config-file', conf_file], project='novalite')
    objects.register_all()
    fields = json.loads(instance_json)
    instance = objects.Instance(uuid=fields['uuid'], id=fields['id'],
                                project_id=fields['project_id'])
    getattr(libvirt_vif, action)(instance, json.loads(vif_json))


if __name__ == '__main__':
    _child(sys.argv[1:])
