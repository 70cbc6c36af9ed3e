"""REAL QEMU guests (TCG) on a Neutron network, on two compute hosts joined by geneve.

The stack runs the real Neutron (ML2/OVN, OVS's userspace datapath) and two computes on
the libvirt driver. hostA is the machine as it is: its compute, the machine's libvirtd
(``qemu:///system``), its QEMU and its taps in the root network namespace, beside the
root namespace's ``br-int``. hostB's switch is in a network namespace of its own
(``novalite.allinone.ovn``), and so is everything of hostB that touches a packet:

- its novalite-compute runs inside the namespace (``Stack(netns_computes=True)``), so
  that os-vif's tap is made there and plugged into hostB's ``br-int`` (the compute's
  ``[os_vif_ovs] ovsdb_connection`` is hostB's switch). It reaches RabbitMQ, the
  databases, Placement, Glance and Neutron on 127.0.0.1 through a forwarder that
  relays those ports into the namespace (``tests.devstack.harness.forward``);
- a libvirtd of its own runs there too (``libvirtd.NamespaceDaemon``), so its QEMU opens
  the tap by name in that namespace. It has private libvirt folders (its own mount
  namespace) so the two libvirtds never see each other's domains, and its own hostname
  (``hostB``), which the driver reports as its node. The compute connects to it through
  its socket file (``qemu:///system?socket=...``).

Other designs, rejected: the compute in the root namespace with only libvirtd in hostB's
fails, as os-vif makes taps with pyroute2 in the calling process's namespace
(``os_vif/internal/ip/linux/impl_pyroute2.py``), and QEMU opens a tap by name in its
own, while hostB's ovs-vswitchd only finds devices in its. Moving the tap in the product
code would make novalite know test namespaces. Making the services listen where a namespace
sees them would change RabbitMQ's and MariaDB's configuration for the whole machine.
A second libvirtd without private folders would share the first one's domain definitions
and state (/etc/libvirt/qemu, /run/libvirt/qemu), its sockets and its hostname (both
nodes would have one name in Placement).

The guest is ``guest_image``'s: it gets its address by DHCP (OVN answers it on the
chassis the port is bound to) and prints the lease on its serial console. The test boots
guest B on hostB first, learns its address from Neutron, and boots guest A on hostA from
an image whose kernel command line (``os_command_line``) names B's address, which A then
pings, and fetches B's web page from (TCP), across the geneve tunnel, and reports on its
console. A namespace plugged into hostA's ``br-int`` on a Neutron port of its own
(``test_neutron_harness.Plugged``) pings both guests and fetches their pages. Deleting
the servers removes their taps, OVS ports, Neutron ports and domains. Two guests only:
TCG is slow on two cores.

Guest A then live-migrates to hostB (``openstack server migrate --live-migration
--host hostB``): a block migration (the instances folders are not shared), peer to
peer from the machine's libvirtd to hostB's, which the former reaches through hostB's
socket file, named by ``[libvirt] live_migration_uri`` as ``<MIGRATION_SOCKETS>/<the
destination's live_migration_inbound_addr>/libvirt-sock``. QEMU's stream and NBD go
over a veth of their own (``MIGRATION_ADDRS``) from the root namespace into hostB's:
the geneve underlay's hostB address has no route from the root namespace (hostA's
underlay address is ``noprefixroute``), and a route to it would send the stream
through OVS's userspace datapath. hostB's libvirtd has a host uuid of its own and sees
hostB's instances folder at hostA's path too (a domain names its files by the path it
was started with). The server is then ACTIVE on hostB with its port bound there only,
its domain runs in hostB's libvirtd only, and the guest, still the one that booted
(hostB's console log has no boot marker), answers ping and HTTP from hostA's
namespace across geneve and powers off on the button on hostB's console.

Needs what ``test_qemu`` and ``test_neutron_harness`` need; skips without it, fails
under ``CI``.
"""
from __future__ import annotations

import array
import fcntl
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

import libvirt
import pytest

from tests.devstack import clients, guest_image, libvirtd, session
from tests.devstack.clients import osc
from tests.devstack.harness import Stack
from tests.devstack.test_neutron_harness import Plugged, _socket_in, ping, require_network

HOSTS = ('hostA', 'hostB')
CIDR = '10.30.0.0/24'
NETWORK = 'qemu-net'
BOOT_TIMEOUT = 240
# Each host's instances: a directory QEMU's user can traverse (see test_qemu).
INSTANCES_PATH = os.path.join(tempfile.gettempdir(),
                              'novalite-qemu-net-' + uuid.uuid4().hex[:8])
LEASE = re.compile(r'%s ip=(\S+) .*uptime=(\S+)' % guest_image.DHCP_MARKER)
PING_OK = re.compile(r'%s target=(\S+) tries=(\d+) time=(.*)' % guest_image.PING_OK_MARKER)
TCP_DONE = re.compile(r'(%s|%s) target=' % (guest_image.TCP_OK_MARKER,
                                            guest_image.TCP_FAIL_MARKER))
# The live migration's own link from the root namespace (hostA) into hostB's, and the
# folder with each destination's libvirtd socket under its address.
MIGRATION_ADDRS = {'hostA': '172.29.255.1', 'hostB': '172.29.255.2'}
MIGRATION_PREFIX = 30
MIGRATION_LINK = 'nlmig' + uuid.uuid4().hex[:6]
MIGRATION_SOCKETS = os.path.join(INSTANCES_PATH, 'sockets')
MV = ('--os-compute-api-version', '2.80')
POWER_OFF_LINE = 'power button: powering off'
# ethtool's ioctl, to turn a device's TX checksum offload off (there is no ethtool here).
SIOCETHTOOL, ETHTOOL_STXCSUM = 0x8946, 0x17


class Cloud:
    """The stack and hostB's libvirtd; ``uri`` and ``qemu_run_dir`` by host."""

    def __init__(self, stack: Stack, host_b: libvirtd.NamespaceDaemon) -> None:
        self.stack = stack
        self.uri = {'hostA': libvirtd.URI, 'hostB': host_b.uri}
        # Where each libvirtd keeps its QEMU pid files (hostB's: its private /run).
        self.qemu_run_dir = {'hostA': '/run/libvirt/qemu',
                             'hostB': os.path.join(host_b.run_dir, 'run', 'qemu')}

    def domains(self) -> set[str]:
        """The uuids of both libvirtds' domains."""
        found = set()
        for uri in self.uri.values():
            conn = libvirt.open(uri)
            try:
                found |= {d.UUIDString() for d in conn.listAllDomains(0)}
            finally:
                conn.close()
        return found

    def remove_domains(self, uuids: list[str]) -> None:
        """Destroy and undefine whatever of ``uuids`` either libvirtd (of those that
        run) still has."""
        for uri in self.uri.values():
            try:
                conn = libvirt.open(uri)
            except libvirt.libvirtError:
                continue  # not started, or gone: no domain there
            try:
                for domain in conn.listAllDomains(0):
                    if domain.UUIDString() in uuids:
                        if domain.isActive():
                            domain.destroy()
                        domain.undefine()
            finally:
                conn.close()


# Servers this module made: whatever of them libvirt still has goes at the end.
_made: list[str] = []
# The first test's guests, by name ('a', 'b'): server, port and address, for the next.
_guests: dict[str, dict[str, Any]] = {}


def _compute_conf(host: str, uri: str) -> dict[str, dict[str, Any]]:
    return {'DEFAULT': {'compute_driver': 'libvirt.LibvirtDriver',
                        'instances_path': os.path.join(INSTANCES_PATH, host)},
            'libvirt': {'virt_type': 'qemu', 'connection_uri': uri,
                        'live_migration_uri': 'qemu+unix:///system?socket=%s' % (
                            os.path.join(MIGRATION_SOCKETS, '%s', 'libvirt-sock')),
                        'live_migration_inbound_addr': MIGRATION_ADDRS[host]}}


def _migration_link(netns: str, host_b: libvirtd.NamespaceDaemon) -> None:
    """The veth hostA's QEMU sends its stream over, and hostB's socket under hostB's
    address."""
    peer = MIGRATION_LINK[:-1] + 'b'
    for argv in (['ip', 'link', 'add', MIGRATION_LINK, 'type', 'veth', 'peer', 'name',
                  peer, 'netns', netns],
                 ['ip', 'addr', 'add', '%s/%d' % (MIGRATION_ADDRS['hostA'], MIGRATION_PREFIX),
                  'dev', MIGRATION_LINK],
                 ['ip', 'link', 'set', MIGRATION_LINK, 'up'],
                 ['ip', '-n', netns, 'addr', 'add', '%s/%d' % (MIGRATION_ADDRS['hostB'],
                                                               MIGRATION_PREFIX), 'dev', peer],
                 ['ip', '-n', netns, 'link', 'set', peer, 'up']):
        subprocess.run(argv, check=True, capture_output=True)
    os.makedirs(MIGRATION_SOCKETS, exist_ok=True)
    os.symlink(os.path.dirname(host_b.socket),
               os.path.join(MIGRATION_SOCKETS, MIGRATION_ADDRS['hostB']))


@pytest.fixture(scope='module')
def image() -> guest_image.GuestImage:
    require_network()
    libvirtd.check_packages()
    try:
        return guest_image.build()
    except (RuntimeError, OSError) as exc:
        libvirtd.unavailable('cannot build the guest image: %s' % exc)
        raise


@pytest.fixture(scope='module')
def cloud(image: guest_image.GuestImage,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cloud]:
    """The machine's libvirtd (started here if not running), the stack, and hostB's
    libvirtd, started in hostB's namespace as soon as the namespace exists. Afterwards:
    whatever domain is left, the computes, hostB's libvirtd, the stack, the machine's
    libvirtd if started here, in that order."""
    # hostB's libvirtd sees hostB's instances at hostA's path too: a domain coming
    # from hostA names its files there.
    host_b = libvirtd.NamespaceDaemon(
        str(tmp_path_factory.mktemp('libvirtd-hostB')), 'hostB',
        binds=[(os.path.join(INSTANCES_PATH, 'hostB'), os.path.join(INSTANCES_PATH, 'hostA'))])

    def start_host_b(stack: Stack) -> None:
        assert stack.neutron is not None
        netns = stack.neutron.chassis('hostB').netns
        assert netns is not None
        _migration_link(netns, host_b)
        host_b.start(netns)

    stack = session.new_stack(
        str(tmp_path_factory.mktemp('devstack-network-qemu')), computes=HOSTS,
        network=True, netns_computes=True, before_daemons=start_host_b,
        host_conf={'compute-hostA': _compute_conf('hostA', libvirtd.URI),
                   'compute-hostB': _compute_conf('hostB', host_b.uri)})
    made = Cloud(stack, host_b)
    root_daemons = None
    left: list[str] = []
    for host in ('', *HOSTS):
        os.makedirs(os.path.join(INSTANCES_PATH, host))
        os.chmod(os.path.join(INSTANCES_PATH, host), 0o711)
    try:
        if not libvirtd.reachable():
            root_daemons = libvirtd.Daemons(str(tmp_path_factory.mktemp('libvirtd')))
            root_daemons.start()
        stack.up()
        print('\nstack %s (network-qemu) up in %.1f s' % (stack.name, stack.timings['up']))
        yield made
    finally:
        try:
            made.remove_domains(_made)
            _remove_taps(stack, _made)
        finally:
            for name in ('compute-hostA', 'compute-hostB'):
                if name in stack.daemons:
                    stack.stop(name)
            left += host_b.stop()
            if _link_exists(MIGRATION_LINK, None):
                subprocess.run(['ip', 'link', 'del', MIGRATION_LINK], check=True)
            left += stack.down(check=False)
            if root_daemons is not None:
                left += root_daemons.stop()
            shutil.rmtree(INSTANCES_PATH, ignore_errors=True)
    assert not left, 'left behind: %s' % left


def _upload(stack: Stack, image: guest_image.GuestImage, name: str, cmdline: str,
            kernel_ramdisk: dict[str, str]) -> str:
    """A root image booting the guest's kernel and ramdisk with ``cmdline``; the kernel
    and ramdisk uploaded the first time (``kernel_ramdisk`` keeps their ids)."""
    for kind, path in (('aki', image.kernel), ('ari', image.ramdisk)):
        if kind not in kernel_ramdisk:
            kernel_ramdisk[kind] = osc(stack, 'image', 'create', '--disk-format', kind,
                                       '--container-format', kind, '--file', path,
                                       'qemu-net-' + kind)['id']
    return osc(stack, 'image', 'create', '--disk-format', 'raw', '--container-format',
               'bare', '--file', image.root,
               '--property', 'kernel_id=%s' % kernel_ramdisk['aki'],
               '--property', 'ramdisk_id=%s' % kernel_ramdisk['ari'],
               '--property', 'os_command_line=%s' % cmdline, name)['id']


def _boot(stack: Stack, name: str, image_id: str, host: str) -> dict[str, Any]:
    """``server create --host`` (2.74) on the network, ACTIVE."""
    server = osc(stack, '--os-compute-api-version', '2.74', 'server', 'create', '--image',
                 image_id, '--flavor', 'm1.nano', '--network', NETWORK, '--host', host,
                 '--wait', name, timeout=BOOT_TIMEOUT)
    _made.append(server['id'])
    assert server['status'] == 'ACTIVE', server
    assert server['OS-EXT-SRV-ATTR:host'] == host, server
    return server


def _port(stack: Stack, server_id: str) -> dict[str, Any]:
    assert stack.neutron is not None
    ports = stack.neutron.api('GET', '/ports?device_id=%s' % server_id).json()['ports']
    assert len(ports) == 1, ports
    return ports[0]


def _qemu_started(cloud: Cloud, host: str, server: dict[str, Any]) -> float:
    """When (``time.time()``) the server's QEMU process started."""
    pidfile = os.path.join(cloud.qemu_run_dir[host],
                           server['OS-EXT-SRV-ATTR:instance_name'] + '.pid')
    with open(pidfile) as f:
        pid = int(f.read().strip())
    with open('/proc/%d/stat' % pid) as f:
        start_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
    with open('/proc/uptime') as f:
        uptime = float(f.read().split()[0])
    return time.time() - uptime + start_ticks / os.sysconf('SC_CLK_TCK')


def _wait_console_file(host: str, server_id: str, pattern: re.Pattern[str],
                       timeout: float = BOOT_TIMEOUT) -> tuple[re.Match[str], float]:
    """Poll the console log file until ``pattern`` matches; (the match, when)."""
    path = os.path.join(INSTANCES_PATH, host, server_id, 'console.log')
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path, errors='replace') as f:
                found = pattern.search(f.read())
        except FileNotFoundError:
            found = None
        if found:
            return found, time.time()
        if time.monotonic() > deadline:
            with open(path, errors='replace') as f:
                pytest.fail('no %r in the console of %s after %ss:\n%s' % (
                    pattern.pattern, server_id, timeout, f.read()))
        time.sleep(0.1)


def _console(stack: Stack, server_id: str) -> str:
    return osc(stack, 'console', 'log', 'show', server_id, fmt_json=False)


def _timed_pings(netns: str, address: str, count: int = 3) -> list[float]:
    """``count`` single echoes; the milliseconds of each answered one."""
    rtts = []
    for _ in range(count):
        started = time.monotonic()
        if ping(netns, address, 1):
            rtts.append((time.monotonic() - started) * 1000)
    return rtts


def _probe(stack: Stack, like: dict[str, Any],
           label: str = 'probe') -> tuple[Plugged, dict[str, Any]]:
    """A namespace on hostA's ``br-int``, on a port of its own on the network with the
    project and security groups of port ``like`` (whose default group lets its members
    in), its fixed address set; ``label`` names it (a removed probe leaves its OVS port,
    so each probe has a label of its own)."""
    assert stack.neutron is not None
    resp = stack.neutron.api('POST', '/ports', json={'port': {
        'network_id': like['network_id'], 'project_id': like['project_id'],
        'security_groups': like['security_groups'], 'binding:host_id': 'hostA',
        'device_owner': 'novalite:probe', 'device_id': str(uuid.uuid4()),
        'name': 'qemu-net-probe'}})
    assert resp.status_code == 201, resp.text
    port = resp.json()['port']
    plugged = Plugged(stack.neutron, 'hostA', port, label)
    subprocess.run(['ip', '-n', plugged.netns, 'addr', 'add', '%s/%s' % (
        port['fixed_ips'][0]['ip_address'], CIDR.split('/')[1]), 'dev', 'eth0'],
        check=True, capture_output=True)
    return plugged, port


def _tx_checksum_off(netns: str, device: str) -> None:
    """``ethtool -K DEVICE tx off`` in ``netns``: a veth leaves TCP checksums to its
    peer, and OVS's userspace datapath, reading the peer as raw frames, never makes
    them (the guests' NICs are set up not to leave them: see novalite's ``vif.py``)."""
    value = array.array('B', struct.pack('II', ETHTOOL_STXCSUM, 0))
    request = struct.pack('16sP', device.encode(), value.buffer_info()[0]) + b'\0' * 16
    with _socket_in(netns, socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, SIOCETHTOOL, request)


def _http_get(netns: str, address: str) -> str:
    """The page at ``http://address/``, fetched from namespace ``netns``."""
    with _socket_in(netns, socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect((address, 80))
        sock.sendall(b'GET / HTTP/1.0\r\n\r\n')
        page = b''
        while chunk := sock.recv(4096):
            page += chunk
    return page.decode(errors='replace')


def _remove_taps(stack: Stack, server_ids: list[str]) -> None:
    """The root namespace's taps of the servers' ports: os-vif makes them persistent,
    so a test that fails before its servers are deleted would leave them (hostB's go
    with its namespace)."""
    if stack.neutron is None:
        return
    for server_id in server_ids:
        try:
            ports = stack.neutron.api('GET', '/ports?device_id=%s' % server_id).json()['ports']
        except Exception:  # Neutron gone already: nothing to learn the names from
            return
        for port in ports:
            tap = 'tap' + port['id'][:11]
            if _link_exists(tap, None):
                subprocess.run(['ip', 'link', 'del', tap], check=False)


def _link_exists(device: str, netns: str | None) -> bool:
    return subprocess.run(['ip', *(['-n', netns] if netns else []), 'link', 'show', 'dev',
                           device], capture_output=True).returncode == 0


def test_real_guests_get_their_neutron_ip_by_dhcp_and_ping_across_hosts(
        cloud: Cloud, image: guest_image.GuestImage) -> None:
    stack = cloud.stack
    assert stack.neutron is not None
    started = time.monotonic()
    osc(stack, 'network', 'create', NETWORK)
    osc(stack, 'subnet', 'create', '--network', NETWORK, '--subnet-range', CIDR,
        'qemu-subnet')
    kernel_ramdisk: dict[str, str] = {}
    plain = _upload(stack, image, 'qemu-net-guest', image.cmdline, kernel_ramdisk)

    # Guest B on hostB: its address is known once it is ACTIVE.
    server_b = _boot(stack, 'qemu-net-b', plain, 'hostB')
    port_b = _port(stack, server_b['id'])
    ip_b = port_b['fixed_ips'][0]['ip_address']
    assert port_b['binding:host_id'] == 'hostB'
    lease_b, seen_b = _wait_console_file('hostB', server_b['id'], LEASE)
    qemu_b = _qemu_started(cloud, 'hostB', server_b)

    # Guest A on hostA pings B: B's address on its kernel command line.
    pinging = _upload(stack, image, 'qemu-net-guest-ping',
                      '%s novalite_ping=%s' % (image.cmdline, ip_b), kernel_ramdisk)
    server_a = _boot(stack, 'qemu-net-a', pinging, 'hostA')
    port_a = _port(stack, server_a['id'])
    ip_a = port_a['fixed_ips'][0]['ip_address']
    assert port_a['binding:host_id'] == 'hostA'
    lease_a, seen_a = _wait_console_file('hostA', server_a['id'], LEASE)
    qemu_a = _qemu_started(cloud, 'hostA', server_a)
    pinged, _ = _wait_console_file('hostA', server_a['id'], PING_OK)
    _wait_console_file('hostA', server_a['id'], TCP_DONE)
    print('\nDHCP lease on the console %.1f s (B) and %.1f s (A) after QEMU started '
          '(guest uptime %s s and %s s)' % (seen_b - qemu_b, seen_a - qemu_a,
                                             lease_b.group(2), lease_a.group(2)))
    print('guest A pinged guest B across geneve: try %s, %s' % (pinged.group(2),
                                                                 pinged.group(3)))

    # What the user sees: each console log shows the lease of exactly its Neutron IP.
    console_a, console_b = _console(stack, server_a['id']), _console(stack, server_b['id'])
    assert [m.group(1) for m in LEASE.finditer(console_b)] == [ip_b], console_b
    assert [m.group(1) for m in LEASE.finditer(console_a)] == [ip_a], console_a
    assert '%s target=%s ' % (guest_image.PING_OK_MARKER, ip_b) in console_a, console_a
    assert guest_image.PING_FAIL_MARKER not in console_a
    # TCP too, whose checksums the guests make themselves on this datapath.
    assert '%s target=%s ' % (guest_image.TCP_OK_MARKER, ip_b) in console_a, console_a

    probe, probe_port = _probe(stack, port_a)
    try:
        to_a = _timed_pings(probe.netns, ip_a)
        to_b = _timed_pings(probe.netns, ip_b)
        print('ping from a namespace on hostA: guest A %s ms, guest B (geneve) %s ms' % (
            ', '.join('%.2f' % t for t in to_a), ', '.join('%.2f' % t for t in to_b)))
        assert len(to_a) == 3 and len(to_b) == 3, (to_a, to_b)
        _tx_checksum_off(probe.netns, 'eth0')
        for address in (ip_a, ip_b):
            assert guest_image.HTTP_BODY in _http_get(probe.netns, address)
    finally:
        probe.remove()
        stack.neutron.api('DELETE', '/ports/%s' % probe_port['id'])

    netns_b = stack.neutron.chassis('hostB').netns
    assert _link_exists('tap' + port_b['id'][:11], netns_b)
    assert not _link_exists('tap' + port_b['id'][:11], None)  # in hostB's namespace only
    print('test wall time %.1f s' % (time.monotonic() - started))
    _guests.update(a={'server': server_a, 'port': port_a, 'ip': ip_a},
                   b={'server': server_b, 'port': port_b, 'ip': ip_b})


def _guest(name: str) -> dict[str, Any]:
    if name not in _guests:
        pytest.skip('the first test did not boot the guests')
    return _guests[name]


def _why(stack: Stack, sid: str, shown: dict[str, Any]) -> str:
    """What a failed move left: the server, its faults, the computes' logs."""
    faults = stack.query('cell1', 'SELECT message, details FROM instance_faults WHERE '
                         'instance_uuid = :sid', sid=sid)
    logs = '\n'.join('--- %s\n%s' % (name, stack.daemons[name].tail())
                     for name in ('compute-hostA', 'compute-hostB'))
    return 'server %s\nfaults %s\n%s' % (shown, faults, logs)


def _domain_hosts(cloud: Cloud, sid: str) -> dict[str, bool]:
    """host -> whether its domain runs, for each libvirtd that has the domain."""
    found = {}
    for host, uri in cloud.uri.items():
        conn = libvirt.open(uri)
        try:
            domains = {d.UUIDString(): bool(d.isActive()) for d in conn.listAllDomains(0)}
        finally:
            conn.close()
        if sid in domains:
            found[host] = domains[sid]
    return found


def test_guest_a_moves_live_to_hostB_and_still_answers_on_its_neutron_address(
        cloud: Cloud) -> None:
    stack = cloud.stack
    assert stack.neutron is not None
    guest = _guest('a')
    sid, port_id, ip_a = guest['server']['id'], guest['port']['id'], guest['ip']
    tap = 'tap' + port_id[:11]
    netns_b = stack.neutron.chassis('hostB').netns
    assert guest_image.MARKER in _console(stack, sid)
    probe, probe_port = _probe(stack, guest['port'], 'mprobe')
    try:
        _tx_checksum_off(probe.netns, 'eth0')
        assert len(_timed_pings(probe.netns, ip_a)) == 3

        osc(stack, *MV, 'server', 'migrate', '--live-migration', '--host', 'hostB',
            '--wait', sid, fmt_json=False, timeout=BOOT_TIMEOUT)
        shown = osc(stack, 'server', 'show', sid)
        assert (shown['status'], shown['OS-EXT-SRV-ATTR:host']) == ('ACTIVE', 'hostB'), \
            _why(stack, sid, shown)
        rows = stack.query('cell1', 'SELECT status, source_compute, dest_compute, '
                           'memory_total, memory_processed FROM migrations WHERE '
                           "instance_uuid = :sid AND migration_type = 'live-migration'",
                           sid=sid)
        assert [tuple(r)[:3] for r in rows] == [('completed', 'hostA', 'hostB')], rows
        # The guest's memory (128 MiB) went over the migration link.
        assert rows[0][3] >= 100 * 1024 * 1024 and rows[0][4], rows
        # The domain runs in hostB's libvirtd only, on a tap in hostB's namespace.
        assert _domain_hosts(cloud, sid) == {'hostB': True}
        assert _link_exists(tap, netns_b) and not _link_exists(tap, None)
        assert tap in stack.neutron.chassis('hostB').vsctl('list-ports', 'br-int').split()
        assert tap not in stack.neutron.chassis('hostA').vsctl('list-ports',
                                                               'br-int').split()
        # The port is bound to hostB, and only there.
        port = stack.neutron.api('GET', '/ports/%s' % port_id).json()['port']
        assert port['binding:host_id'] == 'hostB', port
        bindings = stack.neutron.api('GET', '/ports/%s/bindings' % port_id).json()
        assert [(b['host'], b['status']) for b in bindings['bindings']] == [
            ('hostB', 'ACTIVE')], bindings

        # Its address answers from hostA's namespace, now across geneve, once OVN has
        # moved the port to hostB's chassis.
        stack.wait_for(lambda: ping(probe.netns, ip_a, 1), BOOT_TIMEOUT,
                       'guest A answering ping on hostB')
        after = _timed_pings(probe.netns, ip_a)
        print('\nguest A live-migrated to hostB (%s ms across geneve)'
              % ', '.join('%.2f' % t for t in after))
        assert len(after) == 3, after
        assert guest_image.HTTP_BODY in _http_get(probe.netns, ip_a)
    finally:
        probe.remove()
        stack.neutron.api('DELETE', '/ports/%s' % probe_port['id'])

    # The guest that booted on hostA still runs: hostB's console log (the destination
    # QEMU's) has no boot marker, and the guest answers the power button there.
    assert guest_image.MARKER not in _console(stack, sid)
    osc(stack, 'server', 'stop', sid, fmt_json=False)
    clients.wait_status(stack, sid, 'SHUTOFF', timeout=BOOT_TIMEOUT)
    log = _console(stack, sid)
    assert POWER_OFF_LINE in log and guest_image.MARKER not in log, log


def test_deleted_servers_leave_no_tap_port_or_domain(cloud: Cloud) -> None:
    stack = cloud.stack
    assert stack.neutron is not None
    guests = [_guest('a'), _guest('b')]
    # Each server's tap, in the namespace of the host it is on now.
    taps = {'tap' + g['port']['id'][:11]:
            osc(stack, 'server', 'show', g['server']['id'])['OS-EXT-SRV-ATTR:host']
            for g in guests}
    netns = {h: stack.neutron.chassis(h).netns for h in HOSTS}
    for tap, host in taps.items():
        assert _link_exists(tap, netns[host]), (host, tap)
    osc(stack, 'server', 'delete', '--wait', *(g['server']['id'] for g in guests),
        fmt_json=False, timeout=BOOT_TIMEOUT)
    for tap, host in taps.items():
        assert not _link_exists(tap, netns[host]), (host, tap)
        assert tap not in stack.neutron.chassis(host).vsctl('list-ports', 'br-int').split()
    for g in guests:
        assert stack.neutron.api('GET', '/ports/%s' % g['port']['id']).status_code == 404
    assert not {g['server']['id'] for g in guests} & cloud.domains()
    for g in guests:
        assert clients.allocations(stack, g['server']['id']) == {}
