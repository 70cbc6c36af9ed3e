"""The network environment alone (``tests.devstack.harness.neutron``, no novalite stack): the
real Neutron on ML2/OVN with a chassis for hostA (root namespace) and hostB (a namespace
of its own). Ports bound to each host, plugged as a veth into a namespace, go ACTIVE, get
their address from OVN's DHCP and ping each other across the geneve underlay; Neutron
posts ``network-vif-plugged`` to the compute API; stopping leaves nothing behind.
"""
from __future__ import annotations

import ctypes
import glob
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from novalite.allinone import ovn
from tests.devstack import session
from tests.devstack.harness import backends, neutron
from tests.devstack.network import _unavailable, require_network  # noqa: F401

HOSTS = ('hostA', 'hostB')
# dhclient's script: the address, MTU and default route only. Debian's own would rewrite
# the machine's /etc/resolv.conf (a namespace has no /etc/netns/<ns>/resolv.conf).
DHCLIENT_SCRIPT = '''#!/bin/sh
case "$reason" in
  BOUND|RENEW|REBIND|REBOOT)
    ip addr flush dev $interface
    ip addr add $new_ip_address/$new_subnet_mask dev $interface
    [ -n "$new_interface_mtu" ] && ip link set $interface mtu $new_interface_mtu
    for r in $new_routers; do ip route replace default via $r dev $interface; break; done ;;
esac
exit 0
'''


class FakeNovaEvents:
    """Test double for the compute API's ``os-server-external-events``: it records each
    event Neutron posts and answers as Nova does (200, each event ``completed``)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.requests: set[tuple[str, str | None]] = set()  # (path, X-Auth-Token)
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                events = body.get('events', [])
                recorder.events += events
                recorder.requests.add((self.path, self.headers.get('X-Auth-Token')))
                self._answer({'events': [dict(e, code=200, status='completed')
                                         for e in events]})

            def do_GET(self) -> None:
                self._answer({'version': {'id': 'v2.1', 'status': 'CURRENT',
                                          'version': '2.96', 'min_version': '2.1'}})

            def _answer(self, doc: dict[str, Any]) -> None:
                out = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope='module')
def nova() -> Iterator[FakeNovaEvents]:
    fake = FakeNovaEvents()
    yield fake
    fake.close()


@pytest.fixture(scope='module')
def env(nova: FakeNovaEvents, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[neutron.NeutronEnvironment]:
    require_network()
    made = neutron.NeutronEnvironment(str(tmp_path_factory.mktemp('neutron-harness')), HOSTS,
                                      nova.url, session.PREFIX + uuid.uuid4().hex[:4])
    try:
        made.start()
        print('\nneutron environment up in %.1f s (%s)' % (made.timings['up'], ', '.join(
            '%s %.1f s' % item for item in made.timings.items())))
        yield made
    finally:
        # Already stopped by the last test when all went well; then this finds nothing.
        made.stop()


class Plugged:
    """A port plugged the way os-vif plugs one: a veth whose one end is in the host's
    ``br-int`` and whose other end, with the port's MAC, is ``eth0`` of a namespace
    that stands for the guest."""

    def __init__(self, env: neutron.NeutronEnvironment, host: str, port: dict[str, Any],
                 label: str) -> None:
        self.port = port
        self.netns = '%s-%s' % (env.prefix, label)
        self.dev = env.prefix + label
        chassis = env.chassis(host)
        _ip('netns', 'add', self.netns)
        _ip('link', 'add', self.dev, 'type', 'veth', 'peer', 'name', self.dev + 'g',
            'netns', self.netns)
        _ip('-n', self.netns, 'link', 'set', self.dev + 'g', 'address', port['mac_address'],
            'name', 'eth0')
        _ip('-n', self.netns, 'link', 'set', 'lo', 'up')
        _ip('-n', self.netns, 'link', 'set', 'eth0', 'up')
        if chassis.netns is not None:
            _ip('link', 'set', self.dev, 'netns', chassis.netns)
        _ip(*(['-n', chassis.netns] if chassis.netns else []), 'link', 'set', self.dev, 'up')
        chassis.vsctl('add-port', 'br-int', self.dev, '--', 'set', 'Interface', self.dev,
                      'external_ids:iface-id=%s' % port['id'],
                      'external_ids:attached-mac=%s' % port['mac_address'],
                      'external_ids:iface-status=active',
                      'external_ids:vm-uuid=%s' % port['device_id'])

    def dhcp(self, workdir: str) -> str:
        """Run dhclient once in the namespace; returns the address it configured."""
        script = os.path.join(workdir, 'dhclient-script')
        if not os.path.exists(script):
            with open(script, 'w') as f:
                f.write(DHCLIENT_SCRIPT)
            os.chmod(script, 0o755)
        self.dhclient_pidfile = os.path.join(workdir, self.netns + '.dhclient.pid')
        subprocess.run(['ip', 'netns', 'exec', self.netns, 'dhclient', '-1', '-sf', script,
                        '-pf', self.dhclient_pidfile, '-lf',
                        os.path.join(workdir, self.netns + '.leases'), 'eth0'],
                       check=True, timeout=60, capture_output=True)
        out = subprocess.run(['ip', '-n', self.netns, '-j', '-4', 'addr', 'show', 'eth0'],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)[0]['addr_info'][0]['local']

    def remove(self) -> None:
        """Stop dhclient; deleting the namespace deletes the veth pair."""
        pidfile = getattr(self, 'dhclient_pidfile', None)
        if pidfile and os.path.exists(pidfile):
            with open(pidfile) as f:
                pid = int(f.read())
            if ovn.alive(pid):
                os.kill(pid, 15)
                assert ovn.wait_gone([pid], 5) == []
        subprocess.run(['ip', 'netns', 'del', self.netns], capture_output=True)


def _ip(*args: str) -> None:
    subprocess.run(['ip', *args], check=True, capture_output=True, timeout=30)


_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _socket_in(netns: str, *args: int) -> socket.socket:
    """A socket of namespace ``netns``: the thread joins it for the ``socket()`` call only
    (a socket stays in the namespace it was made in)."""
    with open('/proc/thread-self/ns/net') as home, open('/run/netns/' + netns) as there:
        if _libc.setns(there.fileno(), _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), 'setns %s' % netns)
        try:
            return socket.socket(*args)
        finally:
            if _libc.setns(home.fileno(), _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), 'setns back')


def _checksum(data: bytes) -> int:
    data += b'\0' * (len(data) % 2)
    total = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xffff)
    return ~(total + (total >> 16)) & 0xffff


def ping(netns: str, address: str, count: int = 3) -> int:
    """ICMP echo from namespace ``netns`` over a raw socket (no iputils here); returns
    the number of replies."""
    replies = 0
    with _socket_in(netns, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as sock:
        sock.settimeout(2)
        ident = os.getpid() & 0xffff
        for seq in range(count):
            payload = b'novalite' * 4
            header = struct.pack('!BBHHH', 8, 0, 0, ident, seq)
            sock.sendto(struct.pack('!BBHHH', 8, 0, _checksum(header + payload), ident, seq)
                        + payload, (address, 0))
            try:
                while True:
                    data, _ = sock.recvfrom(2048)
                    start = (data[0] & 0xf) * 4
                    kind, _code, _sum, got_ident, got_seq = struct.unpack(
                        '!BBHHH', data[start:start + 8])
                    if kind == 0 and (got_ident, got_seq) == (ident, seq):
                        replies += 1
                        break
            except TimeoutError:
                pass
    return replies


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %ss waiting for %s' % (timeout, what))
        time.sleep(0.1)


def _bind(env: neutron.NeutronEnvironment, network_id: str, host: str) -> dict[str, Any]:
    """Create a port, then bind it to ``host`` for a server, as a compute host does."""
    resp = env.api('POST', '/ports', json={'port': {'network_id': network_id}})
    assert resp.status_code == 201, resp.text
    resp = env.api('PUT', '/ports/%s' % resp.json()['port']['id'], json={'port': {
        'binding:host_id': host, 'device_owner': 'compute:nova',
        'device_id': str(uuid.uuid4())}})
    assert resp.status_code == 200, resp.text
    return resp.json()['port']


def test_every_chassis_is_an_agent(env: neutron.NeutronEnvironment) -> None:
    assert env.alive_chassis() == set(HOSTS)
    assert env.ovn.registered() == set(HOSTS)
    # hostA's switch is in the root namespace (where libvirt's QEMU plugs its taps).
    assert env.chassis('hostA').netns is None
    assert env.chassis('hostB').netns == '%s-hostB' % env.prefix
    assert env.chassis('hostB').ovsdb_connection.startswith('unix:/')


def test_a_second_environment_is_refused_while_one_runs(
        env: neutron.NeutronEnvironment, tmp_path: Any) -> None:
    with pytest.raises(ovn.LeftoverError, match='ip link del br-int'):
        ovn.check_free()
    # Refused before any device check: two starting at once cannot both pass it.
    second = neutron.NeutronEnvironment(str(tmp_path), HOSTS, 'http://127.0.0.1:9', 'x')
    with pytest.raises(ovn.LeftoverError, match='another OVS/OVN environment runs'):
        second.check()
    code = ('from novalite.allinone import ovn; ovn.OvnEnvironment("/x", ["h"], "p", '
            'ovn.Ledger(ovn.new_record("/x", "p"))).claim()')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert 'LeftoverError: another OVS/OVN environment runs' in result.stderr


def test_the_auto_allocated_topology_extension_is_loaded(
        env: neutron.NeutronEnvironment) -> None:
    aliases = {e['alias'] for e in env.api('GET', '/extensions').json()['extensions']}
    assert {'auto-allocated-topology', 'router', 'binding'} <= aliases


def test_ports_on_two_hosts_go_active_get_dhcp_and_ping(
        env: neutron.NeutronEnvironment, nova: FakeNovaEvents, tmp_path: Any) -> None:
    resp = env.api('POST', '/networks', json={'network': {'name': 'harness-net'}})
    assert resp.status_code == 201, resp.text
    network_id = resp.json()['network']['id']
    resp = env.api('POST', '/subnets', json={'subnet': {
        'network_id': network_id, 'ip_version': 4, 'cidr': '10.0.0.0/24'}})
    assert resp.status_code == 201, resp.text
    ports = {host: _bind(env, network_id, host) for host in HOSTS}
    for port in ports.values():
        assert port['binding:vif_type'] == 'ovs', port
        assert port['binding:vif_details']['datapath_type'] == 'netdev', port
    plugged = []
    try:
        for i, host in enumerate(HOSTS):
            plugged.append(Plugged(env, host, ports[host], 't%d' % i))
        for host, port in ports.items():
            wait_for(lambda p=port: env.api('GET', '/ports/%s' % p['id']).json()[
                'port']['status'] == 'ACTIVE', 30, 'port on %s ACTIVE' % host)
            wait_for(lambda p=port: any(
                e['name'] == 'network-vif-plugged' and e['tag'] == p['id']
                and e['server_uuid'] == p['device_id'] for e in nova.events), 30,
                'network-vif-plugged of the port on %s' % host)
        # As the stack configures it: the compute API's noauth2 admin token.
        assert nova.requests == {('/v2.1/os-server-external-events', 'admin:admin')}
        if shutil.which('dhclient') is None:
            pytest.skip('dhclient not found: no DHCP and ping (tools/setup.sh installs it)')
        addresses = [p.dhcp(str(tmp_path)) for p in plugged]
        assert addresses == [ports[h]['fixed_ips'][0]['ip_address'] for h in HOSTS]
        # hostA to hostB and back: geneve between the two switches over the underlay.
        assert ping(plugged[0].netns, addresses[1]) == 3
        assert ping(plugged[1].netns, addresses[0]) == 3
    finally:
        for p in plugged:
            p.remove()


def test_stop_leaves_nothing_behind(env: neutron.NeutronEnvironment) -> None:
    record = env.record
    assert record['database'] and record['netns'] and record['pids']
    before = set(glob.glob('/tmp/neutron_*'))
    assert env.stop() == []
    print('\nneutron environment stopped in %.1f s' % env.timings['stop'])
    assert env.leftovers() == []
    assert not [n for n in ovn.root_links() if n in ovn.ROOT_DEVICES
                or n.startswith(env.prefix)]
    assert not [ns for ns in ovn.netns_list() if ns.startswith(env.prefix)]
    assert not [p for p in record['pids'].values() if ovn.alive(p)]
    assert record['database'] not in backends.list_databases(neutron.BACKEND,
                                                             record['database'])
    assert set(glob.glob('/tmp/neutron_*')) <= before
