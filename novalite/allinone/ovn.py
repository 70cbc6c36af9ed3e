"""Open vSwitch and OVN for novalite-all and the devstack-style stack: OVN central (the NB
and SB databases and ovn-northd) and one chassis per compute host name (ovsdb-server,
ovs-vswitchd on the userspace datapath, ovn-controller with ``system-id`` = the host name).

The first host's switch lives in the root network namespace, so that libvirtd and QEMU
there open taps plugged into its ``br-int``; every other host gets a network namespace of
its own, reached from the first by a veth underlay that carries geneve tunnels
(``../shared/NEUTRON.md`` is the recipe this follows). Every daemon is given absolute
paths under the environment's folder: nothing goes to /etc, /var/run or /var/lib, and the
packages' own services are never used. What exists is written down in a
``NetworkRecord`` as soon as it exists, so that ``teardown`` finds it after a crash.

Only one such environment runs per machine: the userspace datapath makes the kernel
devices ``br-int`` and ``ovs-netdev`` in the root namespace.
"""
from __future__ import annotations

import copy
import glob
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from novalite import executor

OVS_SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema'
NB_SCHEMA = '/usr/share/ovn/ovn-nb.ovsschema'
SB_SCHEMA = '/usr/share/ovn/ovn-sb.ovsschema'
# The userspace datapath's devices in the root namespace: one environment per machine.
ROOT_DEVICES = ('br-int', 'ovs-netdev')
INTEGRATION_BRIDGE = 'br-int'
TOOLS = ('ip', 'ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd', 'ovs-vsctl', 'ovs-appctl',
         'ovn-nbctl', 'ovn-sbctl', 'ovn-northd', 'ovn-controller', 'ovn-appctl')
# Held (bound) by the process running an environment: two starting at once cannot both
# pass the device check. An abstract socket: no file, and gone with its process.
CLAIM = '\0novalite-ovs-ovn-environment'
# The geneve underlay: host i has UNDERLAY % (i + 1) on its underlay bridge.
UNDERLAY = '172.31.0.%d'
UNDERLAY_PREFIX = 24


class NetworkRecord(TypedDict):
    """What a network environment made, for teardown from ``stack.json``.

    ``pids`` by daemon name; ``netns`` the namespaces; ``links`` the root namespace's
    devices (the namespaces' go with them); ``database`` Neutron's, on MariaDB, when it
    goes with the environment (the devstack stack's; novalite-all keeps its own).
    """

    dir: str
    prefix: str
    pids: dict[str, int]
    netns: list[str]
    links: list[str]
    database: str | None


class LeftoverError(RuntimeError):
    """Another OVS/OVN environment (or its remains) holds the root namespace's devices."""


class Ledger:
    """A ``NetworkRecord``, saved through ``save`` (a deep copy) each time it grows.

    Entries are added BEFORE the thing is made, or as soon as it has a pid, so a crash
    between the two leaves nothing unrecorded.
    """

    def __init__(self, record: NetworkRecord,
                 save: Callable[[NetworkRecord], None] | None = None) -> None:
        self.record = record
        self._save = save
        self._lock = threading.Lock()

    def snapshot(self) -> NetworkRecord:
        with self._lock:
            return copy.deepcopy(self.record)

    def _changed(self) -> None:
        if self._save is not None:
            self._save(self.snapshot())

    def pid(self, name: str, pid: int) -> None:
        with self._lock:
            self.record['pids'][name] = pid
        self._changed()

    def netns(self, name: str) -> None:
        with self._lock:
            self.record['netns'].append(name)
        self._changed()

    def links(self, *names: str) -> None:
        with self._lock:
            self.record['links'] += [n for n in names if n not in self.record['links']]
        self._changed()

    def database(self, name: str) -> None:
        with self._lock:
            self.record['database'] = name
        self._changed()


def new_record(state_dir: str, prefix: str) -> NetworkRecord:
    return {'dir': os.path.abspath(state_dir), 'prefix': prefix, 'pids': {}, 'netns': [],
            'links': [], 'database': None}


@dataclass(frozen=True)
class Chassis:
    """One compute host's switch: where its daemons keep their sockets, and its namespace.

    :param index: its place in the environment's hosts (0: the root namespace's)
    :param netns: the host's network namespace; ``None`` for the root namespace
    :param rundir: its OVS database, sockets and pid files (``OVS_RUNDIR``)
    """

    host: str
    index: int
    netns: str | None
    rundir: str

    @property
    def ovsdb_connection(self) -> str:
        """The OVS database, as ``[os_vif_ovs] ovsdb_connection`` and ``ovs-vsctl --db``
        take it (absolute: OVS resolves a relative ``unix:`` path against its rundir)."""
        return 'unix:%s' % os.path.join(self.rundir, 'db.sock')

    def env(self) -> dict[str, str]:
        """The variables the OVS and OVN tools need to find this host's daemons (to add
        to a process's environment)."""
        return {'OVS_RUNDIR': self.rundir, 'OVN_RUNDIR': self.rundir,
                'OVS_DBDIR': self.rundir, 'OVS_LOGDIR': self.rundir,
                'OVN_LOGDIR': self.rundir, 'OVN_DBDIR': self.rundir}

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        if self.netns is None:
            return list(argv)
        return ['ip', 'netns', 'exec', self.netns, *argv]

    def vsctl(self, *args: str, timeout: float = 30.0) -> str:
        return _run(['ovs-vsctl', '--db=%s' % self.ovsdb_connection, '--timeout=%d'
                     % timeout, *args], env=self.env(), timeout=timeout + 5)

    def appctl(self, target: str, *args: str, timeout: float = 10.0) -> str:
        return _run(['ovs-appctl', '-t', target, *args], env=self.env(), timeout=timeout)


class OvnEnvironment:
    """OVN central and a chassis per host name, under ``state_dir``.

    :param hosts: compute host names; the first one's switch is in the root namespace
    :param prefix: names this environment's namespaces (``<prefix>-<host>``) and root
        namespace devices (``<prefix>p0``...): at most 8 characters, unique per stack
    """

    def __init__(self, state_dir: str, hosts: Sequence[str], prefix: str,
                 ledger: Ledger) -> None:
        if not hosts:
            raise ValueError('at least one compute host is needed')
        if len(prefix) > 8:
            raise ValueError('prefix %r: link names are limited to 15 characters' % prefix)
        self.dir = os.path.abspath(state_dir)
        self.prefix = prefix
        self.ledger = ledger
        self.central_dir = os.path.join(self.dir, 'central')
        self.log_dir = os.path.join(self.dir, 'log')
        self.chassis = {host: Chassis(host, i, None if i == 0 else '%s-%s' % (prefix, host),
                                      os.path.join(self.dir, host))
                        for i, host in enumerate(hosts)}
        self.hosts = tuple(hosts)
        self._claim: socket.socket | None = None

    @property
    def nb_connection(self) -> str:
        return 'unix:%s' % os.path.join(self.central_dir, 'ovnnb_db.sock')

    @property
    def sb_connection(self) -> str:
        return 'unix:%s' % os.path.join(self.central_dir, 'ovnsb_db.sock')

    # -- start ---------------------------------------------------------------------------

    def claim(self) -> None:
        """Make this process the machine's one environment (until ``release()``).

        :raises LeftoverError: another process claimed it, or another environment's
            devices are there
        """
        self.hold_claim()
        check_free()

    def hold_claim(self) -> None:
        """The machine-wide claim alone, without looking for devices: whoever holds it
        may remove what a dead holder left behind before ``claim()`` checks.

        :raises LeftoverError: another process holds it
        """
        if self._claim is None:
            claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                claim.bind(CLAIM)
            except OSError:
                claim.close()
                raise LeftoverError(
                    'another OVS/OVN environment runs (or is starting) on this machine, and '
                    'only one can run at a time: its process holds the abstract socket @%s '
                    '(ss -xlp | grep %s names it)' % (CLAIM[1:], CLAIM[1:])) from None
            self._claim = claim

    def release(self) -> None:
        if self._claim is not None:
            self._claim.close()
            self._claim = None

    def start(self) -> None:
        """Start central, every chassis and the underlay (well under a second each)."""
        self.claim()
        for path in (self.central_dir, self.log_dir,
                     *(c.rundir for c in self.chassis.values())):
            os.makedirs(path, exist_ok=True)
        self._start_central()
        for chassis in self.chassis.values():
            self._start_switch(chassis)
        if len(self.chassis) > 1:
            self._make_underlay()
        for chassis in self.chassis.values():
            self._start_controller(chassis)

    def _central_env(self) -> dict[str, str]:
        return {'OVN_RUNDIR': self.central_dir, 'OVS_RUNDIR': self.central_dir,
                'OVN_LOGDIR': self.log_dir, 'OVN_DBDIR': self.central_dir}

    def _daemon(self, name: str, argv: list[str], pidfile: str, env: dict[str, str],
                chassis: Chassis | None = None) -> None:
        """Start a daemon with ``--detach`` (it returns once the daemon is ready) and
        record its pid; the pid file also finds it should this fail half-way."""
        argv = [*argv, '--pidfile=%s' % pidfile, '--log-file=%s'
                % os.path.join(self.log_dir, name + '.log'), '--detach', '--no-chdir']
        _run(chassis.command(argv) if chassis else argv, env=env, timeout=30)
        self.ledger.pid(name, _read_pid(pidfile))

    def _start_central(self) -> None:
        env = self._central_env()
        for db, schema in (('ovnnb_db', NB_SCHEMA), ('ovnsb_db', SB_SCHEMA)):
            path = os.path.join(self.central_dir, db + '.db')
            if not os.path.exists(path):
                _run(['ovsdb-tool', 'create', path, schema])
            self._daemon('ovn-' + db[3:5], [
                'ovsdb-server', path, '--remote=punix:%s'
                % os.path.join(self.central_dir, db + '.sock'),
                '--unixctl=%s' % os.path.join(self.central_dir, db + '.ctl')],
                os.path.join(self.central_dir, db + '.pid'), env)
        _run(['ovn-nbctl', '--db=' + self.nb_connection, '--no-wait', 'init'], env=env)
        _run(['ovn-sbctl', '--db=' + self.sb_connection, 'init'], env=env)
        self._daemon('ovn-northd', [
            'ovn-northd', '--ovnnb-db=' + self.nb_connection,
            '--ovnsb-db=' + self.sb_connection,
            '--unixctl=%s' % os.path.join(self.central_dir, 'ovn-northd.ctl')],
            os.path.join(self.central_dir, 'ovn-northd.pid'), env)

    def _start_switch(self, chassis: Chassis) -> None:
        """ovsdb-server and ovs-vswitchd, in the host's namespace (made here)."""
        if chassis.netns is not None:
            self.ledger.netns(chassis.netns)
            _run(['ip', 'netns', 'add', chassis.netns])
            _run(['ip', '-n', chassis.netns, 'link', 'set', 'lo', 'up'])
        db = os.path.join(chassis.rundir, 'conf.db')
        if not os.path.exists(db):
            _run(['ovsdb-tool', 'create', db, OVS_SCHEMA])
        env = chassis.env()
        self._daemon(chassis.host + '-ovsdb-server', [
            'ovsdb-server', db, '--remote=punix:%s' % chassis.ovsdb_connection[5:]],
            os.path.join(chassis.rundir, 'ovsdb-server.pid'), env, chassis)
        chassis.vsctl('--no-wait', 'init')
        if chassis.netns is None:
            self.ledger.links(*ROOT_DEVICES)
        self._daemon(chassis.host + '-ovs-vswitchd', [
            'ovs-vswitchd', chassis.ovsdb_connection],
            os.path.join(chassis.rundir, 'ovs-vswitchd.pid'), env, chassis)

    def _start_controller(self, chassis: Chassis) -> None:
        """The chassis keys, ``br-int`` on the netdev datapath, then ovn-controller."""
        encap_ip = UNDERLAY % (chassis.index + 1) if len(self.chassis) > 1 else '127.0.0.1'
        keys = {'system-id': chassis.host, 'hostname': chassis.host,
                'ovn-remote': self.sb_connection, 'ovn-encap-type': 'geneve',
                'ovn-encap-ip': encap_ip, 'ovn-bridge': INTEGRATION_BRIDGE,
                'ovn-bridge-datapath-type': 'netdev'}
        if chassis.index == 0:
            # A gateway chassis, so routers' external ports have somewhere to live.
            keys['ovn-cms-options'] = 'enable-chassis-as-gw'
        chassis.vsctl('set', 'Open_vSwitch', '.',
                      *('external_ids:%s=%s' % item for item in keys.items()))
        chassis.vsctl('--may-exist', 'add-br', INTEGRATION_BRIDGE, '--', 'set', 'Bridge',
                      INTEGRATION_BRIDGE, 'datapath_type=netdev', 'fail-mode=secure',
                      'other-config:disable-in-band=true')
        self._daemon(chassis.host + '-ovn-controller', [
            'ovn-controller', chassis.ovsdb_connection],
            os.path.join(chassis.rundir, 'ovn-controller.pid'), chassis.env(), chassis)

    def underlay_bridge(self, chassis: Chassis) -> str:
        return '%sp%d' % (self.prefix, chassis.index)

    def _make_underlay(self) -> None:
        """Each extra host's underlay bridge joined by a veth to the first host's, which
        switches between them (standalone), all on the userspace datapath."""
        first = self.chassis[self.hosts[0]]
        hub = self.underlay_bridge(first)
        self.ledger.links(hub)
        first.vsctl('--may-exist', 'add-br', hub, '--', 'set', 'Bridge', hub,
                    'datapath_type=netdev')
        for chassis in list(self.chassis.values())[1:]:
            assert chassis.netns is not None
            root_end, ns_end = '%su%d' % (self.prefix, chassis.index), '%sv%d' % (
                self.prefix, chassis.index)
            self.ledger.links(root_end)
            _run(['ip', 'link', 'add', root_end, 'type', 'veth', 'peer', 'name', ns_end,
                  'netns', chassis.netns])
            _run(['ip', 'link', 'set', root_end, 'up'])
            _run(['ip', '-n', chassis.netns, 'link', 'set', ns_end, 'up'])
            first.vsctl('--may-exist', 'add-port', hub, root_end)
            bridge = self.underlay_bridge(chassis)
            chassis.vsctl('--may-exist', 'add-br', bridge, '--', 'set', 'Bridge', bridge,
                          'datapath_type=netdev', '--', '--may-exist', 'add-port', bridge,
                          ns_end)
        for chassis in self.chassis.values():
            # The first host's address gets no kernel route (noprefixroute): the root
            # namespace's routing table stays as it was; OVS gets a route of its own.
            address = '%s/%d' % (UNDERLAY % (chassis.index + 1), UNDERLAY_PREFIX)
            ip = ['ip'] if chassis.netns is None else ['ip', '-n', chassis.netns]
            extra = ['noprefixroute'] if chassis.netns is None else []
            _run([*ip, 'addr', 'add', address, 'dev', self.underlay_bridge(chassis), *extra])
            _run([*ip, 'link', 'set', self.underlay_bridge(chassis), 'up'])
        # OVS learns the bridge's address from the kernel asynchronously.
        _retry(lambda: first.appctl('ovs-vswitchd', 'ovs/route/add', '%s/%d' % (
            UNDERLAY % 0, UNDERLAY_PREFIX), hub), 10.0)
        macs = {c.host: _mac(self.underlay_bridge(c), c.netns) for c in self.chassis.values()}
        for chassis in self.chassis.values():
            for other in self.chassis.values():
                if other is not chassis:
                    # Static tunnel neighbours: no ARP through the kernel needed.
                    chassis.appctl('ovs-vswitchd', 'tnl/neigh/set',
                                   self.underlay_bridge(chassis),
                                   UNDERLAY % (other.index + 1), macs[other.host])

    def registered(self) -> set[str]:
        """Host names with a ``Chassis_Private`` row in the SB database (what Neutron's
        agent list is built from)."""
        out = _run(['ovn-sbctl', '--db=' + self.sb_connection, '--format=json',
                    '--columns=name', 'list', 'Chassis_Private'], env=self._central_env())
        return {row[0] for row in json.loads(out)['data']}

    # -- stop ----------------------------------------------------------------------------

    def stop_controllers(self) -> None:
        """``ovn-appctl exit`` every ovn-controller at once (each removes its chassis)."""
        threads = [executor.start_thread('ovn-controller-exit', self._exit_controller, c)
                   for c in self.chassis.values()]
        for thread in threads:
            thread.join()

    def _exit_controller(self, chassis: Chassis) -> None:
        pid = self.ledger.snapshot()['pids'].get(chassis.host + '-ovn-controller')
        if pid is None or not alive(pid):
            return
        try:
            _run(['ovn-appctl', '-t', os.path.join(chassis.rundir, 'ovn-controller.%d.ctl'
                                                   % pid), 'exit'], env=chassis.env(),
                 timeout=5)
        except (RuntimeError, subprocess.TimeoutExpired):
            return  # teardown signals it
        wait_gone([pid], 5.0)

    def delete_bridges(self) -> None:
        """``br-int`` and the underlay bridges, while each ovs-vswitchd still runs."""
        for chassis in self.chassis.values():
            if not alive(self.ledger.snapshot()['pids'].get(
                    chassis.host + '-ovs-vswitchd', 0)):
                continue
            try:
                chassis.vsctl('--if-exists', 'del-br', INTEGRATION_BRIDGE, '--',
                              '--if-exists', 'del-br', self.underlay_bridge(chassis),
                              timeout=10)
            except (RuntimeError, subprocess.TimeoutExpired):
                pass  # teardown deletes the devices


# -- checks and teardown, from a record alone ---------------------------------------------

def root_links() -> list[str]:
    """The device names of the root network namespace."""
    out = _run(['ip', '-j', 'link', 'show'])
    return [link['ifname'] for link in json.loads(out)]


def netns_list() -> list[str]:
    out = _run(['ip', '-j', 'netns', 'list'])
    return [ns['name'] for ns in json.loads(out or '[]')]


def check_free() -> None:
    """:raises LeftoverError: the root namespace has a userspace datapath's devices."""
    taken = [name for name in root_links() if name in ROOT_DEVICES]
    if taken:
        raise LeftoverError(
            'an Open vSwitch userspace datapath already runs here, or a previous one left '
            'its devices (%s): only one OVS/OVN environment can run per machine. Stop it '
            '(python -m tests.devstack.harness down --state-dir <its state dir>; a novalite-all '
            'started again with its --state-dir removes what it left; or stop the '
            'ovs-vswitchd that owns them), or remove the devices with: %s'
            % (', '.join(taken), '; '.join('ip link del %s' % n for n in taken)))


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for PID 1 to reap it does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def wait_gone(pids: Sequence[int], timeout: float) -> list[int]:
    """Wait until none of ``pids`` runs; returns those still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def ours(pid: int, record: NetworkRecord) -> bool:
    """Whether ``pid`` runs one of this environment's commands (pids get reused)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            cmdline = f.read().decode(errors='replace')
    except OSError:
        return False
    # gunicorn retitles itself ("gunicorn: master [<prefix>-neutron-api]").
    return record['dir'] + '/' in cmdline or '[%s-' % record['prefix'] in cmdline


def processes(record: NetworkRecord) -> dict[str, int]:
    """This environment's running processes, by name: those recorded, those of the pid
    files under its folder, and any other naming its folder or its gunicorn title (a
    worker whose master was killed)."""
    pids = dict(record['pids'])
    for pidfile in glob.glob(os.path.join(record['dir'], '**', '*.pid'), recursive=True):
        try:
            pids.setdefault(os.path.relpath(pidfile, record['dir']), _read_pid(pidfile))
        except (OSError, ValueError):
            pass
    found = subprocess.run(['pgrep', '-f', '%s/|\\[%s-' % (record['dir'], record['prefix'])],
                           capture_output=True, text=True).stdout.split()
    known = set(pids.values())
    pids.update({'pid %s' % pid: int(pid) for pid in found if int(pid) not in known})
    return {name: pid for name, pid in pids.items() if alive(pid) and ours(pid, record)}


def teardown(record: NetworkRecord, timeout: float = 10.0) -> list[str]:
    """Stop every process of ``record`` (SIGTERM, SIGKILL after ``timeout``), delete its
    namespaces and devices; returns the errors met."""
    errors: list[str] = []
    pids = processes(record)
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        for pid in pids.values():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        left = set(wait_gone(list(pids.values()), wait))
        pids = {n: p for n, p in pids.items() if p in left}
        if not pids:
            break
    # The devices first: deleting a veth's root end deletes its end in a namespace,
    # whereas a namespace's deletion leaves the root end to vanish asynchronously.
    present = set(root_links())
    for link in record['links']:
        if link in present:
            _delete(['ip', 'link', 'del', link], link, root_links, errors)
    namespaces = set(netns_list())
    for ns in record['netns']:
        if ns in namespaces:
            _delete(['ip', 'netns', 'del', ns], ns, netns_list, errors)
    return errors


def _delete(argv: list[str], name: str, listing: Callable[[], list[str]],
            errors: list[str]) -> None:
    try:
        _run(argv)
    except RuntimeError as exc:
        if name in listing():  # else it went meanwhile, with what held it
            errors.append(str(exc))


def claimed_elsewhere() -> bool:
    """Whether another process holds the machine's claim (its environment runs)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.bind(CLAIM)
    except OSError:
        return True
    finally:
        probe.close()
    return False


def leftovers(record: NetworkRecord) -> list[str]:
    """Processes, namespaces and root namespace devices of ``record`` still there.

    ``br-int`` and ``ovs-netdev`` have the same names in every environment: once another
    process holds the claim (the next environment started at once), they are its own.
    """
    left = ['process %s (pid %d)' % (n, p) for n, p in processes(record).items()]
    left += ['netns %s' % ns for ns in netns_list()
             if ns in record['netns'] or ns.startswith(record['prefix'] + '-')]
    shared = claimed_elsewhere()
    left += ['link %s' % name for name in root_links()
             if (name in record['links'] and not (shared and name in ROOT_DEVICES))
             or name.startswith(record['prefix'])]
    return left


# -- helpers ------------------------------------------------------------------------------

def _run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 30.0) -> str:
    """Run ``argv`` with ``env`` added to this process's environment; returns its output.

    :raises RuntimeError: it failed (the message has its error output)
    """
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **env} if env else None,
                            stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise RuntimeError('%s failed (%s): %s' % (' '.join(argv), result.returncode,
                                                   (result.stderr or result.stdout).strip()))
    return result.stdout


def _retry(call: Callable[[], object], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            call()
            return
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _read_pid(pidfile: str) -> int:
    with open(pidfile) as f:
        return int(f.read().strip())


def _mac(device: str, netns: str | None) -> str:
    ip = ['ip', '-j'] if netns is None else ['ip', '-j', '-n', netns]
    return json.loads(_run([*ip, 'link', 'show', 'dev', device]))[0]['address']
