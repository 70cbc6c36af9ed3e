"""A one-node Ceph cluster on a plain file, under the real Cinder's RBD backend: one
monitor, one manager, one bluestore OSD whose block device is a sparse file, the pools
``volumes``, ``volumes2`` and ``images``, and cephx users ``client.cinder`` and ``client.glance``.

Everything lives under the cluster's folder: config, keyrings, the daemons' data, logs
and sockets; nothing goes to /etc/ceph or /var/lib/ceph and the packages' own services
are never used. The monitor listens on two free ports of 127.0.0.1 (msgr v2 and v1)
chosen per cluster, so several clusters can run on one machine. Keys are made here
(a cephx key is 16 random bytes with a small header), so the monitor starts with every
user and its capabilities: no ``ceph auth`` round trips. ``../shared/CINDER.md`` is the
recipe this follows. What runs is written down in a ``CephRecord`` as soon as it runs,
so ``teardown`` finds it after a crash.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import struct
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TypedDict

from novalite.allinone import process
from novalite.allinone.glance import free_port
from novalite.allinone.ovn import alive, wait_gone

TOOLS = ('ceph', 'ceph-mon', 'ceph-mgr', 'ceph-osd', 'monmaptool', 'rbd')
# ``volumes`` and ``volumes2``: the pools of Cinder's two backends (a retype between
# them migrates a volume); ``images`` Glance's.
POOLS = ('volumes', 'volumes2', 'images')
PG_NUM = 8
# The block file's size: sparse, about 290 MiB are written by mkfs.
BLOCK_SIZE = 10 * 1024 ** 3
# Stopped in this order: an OSD leaving tells the monitor, which must still be there.
DAEMONS = ('ceph-osd', 'ceph-mgr', 'ceph-mon')
MON, MGR, OSD = 'a', 'x', 0
# cephx users: capabilities by daemon type. ``client.cinder`` also reads ``images``,
# to clone Glance's images when Glance stores them there.
USERS: dict[str, dict[str, str]] = {
    'mon.': {'mon': 'allow *'},
    'client.admin': {'mon': 'allow *', 'osd': 'allow *', 'mds': 'allow *', 'mgr': 'allow *'},
    'mgr.%s' % MGR: {'mon': 'allow profile mgr', 'osd': 'allow *', 'mds': 'allow *'},
    'osd.%d' % OSD: {'mon': 'allow profile osd', 'mgr': 'allow profile osd',
                     'osd': 'allow *'},
    'client.cinder': {'mon': 'profile rbd',
                      'mgr': 'profile rbd pool=volumes, profile rbd pool=volumes2',
                      'osd': 'profile rbd pool=volumes, profile rbd pool=volumes2, '
                             'profile rbd pool=images'},
    'client.glance': {'mon': 'profile rbd', 'mgr': 'profile rbd pool=images',
                      'osd': 'profile rbd pool=images'},
}


class CephRecord(TypedDict):
    """What a cluster made, for teardown: its folder and its daemons' pids by name."""

    dir: str
    pids: dict[str, int]


def new_key() -> str:
    """A cephx secret as keyrings hold it: type AES (1), creation time, 16 random bytes."""
    secret = os.urandom(16)
    return base64.b64encode(struct.pack('<HIIH', 1, int(time.time()), 0, len(secret))
                            + secret).decode()


def keyring(keys: dict[str, str], names: Sequence[str]) -> str:
    """A keyring file's text with the key and capabilities of each user in ``names``."""
    lines = []
    for name in names:
        lines += ['[%s]' % name, '\tkey = %s' % keys[name]]
        lines += ['\tcaps %s = "%s"' % item for item in USERS[name].items()]
    return '\n'.join(lines) + '\n'


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


class CephCluster:
    """A cluster under ``state_dir``, made anew by each ``start()``.

    :param on_record: called with a copy of the ``CephRecord`` each time it grows
    """

    def __init__(self, state_dir: str,
                 on_record: Callable[[CephRecord], None] | None = None) -> None:
        self.dir = os.path.abspath(state_dir)
        self.conf_file = os.path.join(self.dir, 'ceph.conf')
        self.log_dir = os.path.join(self.dir, 'log')
        self.fsid = str(uuid.uuid4())
        # The libvirt secret that holds client.cinder's key on the compute hosts:
        # Cinder names it in its connection info (``rbd_secret_uuid``).
        self.secret_uuid = str(uuid.uuid4())
        self.mon_ports = (0, 0)
        self._on_record = on_record
        self._record: CephRecord = {'dir': self.dir, 'pids': {}}
        self._keys: dict[str, str] = {}
        self.daemons: dict[str, process.Process] = {}
        # Seconds from start() until: the monitor answered ('mon'), the OSD's mkfs was
        # done ('mkfs'), the pools existed ('pools'), every PG was active ('up').
        self.timings: dict[str, float] = {}
        # Set once the monitor knows the pools: a client may connect and open them
        # (its I/O waits until the placement groups are active).
        self.pools_ready = threading.Event()

    @property
    def record(self) -> CephRecord:
        return {'dir': self._record['dir'], 'pids': dict(self._record['pids'])}

    @property
    def mon_host(self) -> str:
        return '[v2:127.0.0.1:%d,v1:127.0.0.1:%d]' % self.mon_ports

    def keyring_file(self, user: str) -> str:
        """The keyring of ``client.<user>`` (what ``[client] keyring`` finds by name)."""
        return os.path.join(self.dir, 'ceph.client.%s.keyring' % user)

    def key(self, user: str) -> str:
        """The cephx key of ``client.<user>`` (``cinder``, ``glance``, ``admin``)."""
        return self._keys['client.' + user]

    def cinder_key(self) -> str:
        """client.cinder's key: the value of the libvirt secret ``secret_uuid``."""
        return self.key('cinder')

    # -- start ---------------------------------------------------------------------------

    def check(self) -> None:
        """:raises RuntimeError: Ceph's packages are missing"""
        missing = missing_tools()
        if missing:
            raise RuntimeError('%s not found: run tools/setup.sh (it installs Ceph)'
                               % ', '.join(missing))

    def start(self, timeout: float = 120.0) -> None:
        """Make the cluster from nothing (what ``state_dir`` held goes) and start it;
        returns once the pools exist and every placement group is active.

        On failure what runs stays, recorded: call ``stop()``.
        """
        started = time.monotonic()
        self.pools_ready.clear()
        self.check()
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        self._save()
        self.mon_ports = (free_port(), free_port())
        self._write_files()
        osd_uuid = str(uuid.uuid4())
        # The OSD's mkfs (1-2 s) needs no monitor: it runs while the monitor starts.
        mkfs = self._popen('osd-mkfs', ['ceph-osd', '-c', self.conf_file, '-i', str(OSD),
                                        '--mkfs', '--osd-uuid', osd_uuid,
                                        '--no-mon-config'])
        try:
            self._run(['monmaptool', '--create', '--addv', MON, self.mon_host, '--fsid',
                       self.fsid, os.path.join(self.dir, 'monmap')])
            self._run(['ceph-mon', '-c', self.conf_file, '--mkfs', '-i', MON, '--monmap',
                       os.path.join(self.dir, 'monmap'), '--keyring',
                       os.path.join(self.dir, 'mon.keyring')])
            self._daemon('ceph-mon', MON)
            self._daemon('ceph-mgr', MGR)
            self.ceph('osd', 'new', osd_uuid, str(OSD))
            self.timings['mon'] = time.monotonic() - started
            # The pools are the monitor's business (a second or so each): made while
            # the OSD's mkfs ends and the OSD boots.
            pools = self._popen('pools', ['ceph', '-c', self.conf_file], stdin=True)
            try:
                assert pools.stdin is not None
                pools.stdin.write(self._pool_commands().encode())
                pools.stdin.close()
                if mkfs.wait(60) != 0:
                    raise RuntimeError('ceph-osd --mkfs failed (%s); see %s' % (
                        mkfs.returncode, os.path.join(self.log_dir, 'osd-mkfs.log')))
                self.timings['mkfs'] = time.monotonic() - started
                self._daemon('ceph-osd', str(OSD))
                pools.wait(60)
            finally:
                if pools.poll() is None:
                    pools.kill()
                    pools.wait()
        finally:
            if mkfs.poll() is None:
                mkfs.kill()
                mkfs.wait()
        self._check_pools()
        self.timings['pools'] = time.monotonic() - started
        self.pools_ready.set()
        self.wait_ready(timeout - (time.monotonic() - started))
        self.timings['up'] = time.monotonic() - started

    def _write_files(self) -> None:
        for path in ('run', 'log', 'mon', 'mgr/ceph-%s' % MGR, 'osd/ceph-%d' % OSD):
            os.makedirs(os.path.join(self.dir, path), exist_ok=True)
        self._keys = {name: new_key() for name in USERS}
        with open(self.conf_file, 'w') as conf:
            conf.write(self.config())
        files = {'mon.keyring': list(USERS),
                 'mgr/ceph-%s/keyring' % MGR: ['mgr.%s' % MGR],
                 'osd/ceph-%d/keyring' % OSD: ['osd.%d' % OSD]}
        for user in ('admin', 'cinder', 'glance'):
            files[os.path.basename(self.keyring_file(user))] = ['client.' + user]
        for path, names in files.items():
            fd = os.open(os.path.join(self.dir, path), os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, 'w') as out:
                out.write(keyring(self._keys, names))

    def config(self) -> str:
        """ceph.conf: one of each daemon on 127.0.0.1, replicas of one, small PG counts,
        reports every second (so a new pool is seen active soon), and no warnings
        about what a one-node test cluster is by design."""
        d = self.dir
        return '\n'.join([
            '[global]', 'fsid = %s' % self.fsid, 'mon_host = %s' % self.mon_host,
            'public_network = 127.0.0.1/32', 'cluster_network = 127.0.0.1/32',
            'auth_cluster_required = cephx', 'auth_service_required = cephx',
            'auth_client_required = cephx',
            'run_dir = %s/run' % d, 'admin_socket = %s/run/$cluster-$name.asok' % d,
            'log_file = %s/log/$cluster-$name.log' % d,
            'pid_file = %s/run/$cluster-$name.pid' % d,
            'osd_pool_default_size = 1', 'osd_pool_default_min_size = 1',
            'osd_pool_default_pg_num = %d' % PG_NUM, 'osd_pool_default_pgp_num = %d' % PG_NUM,
            'osd_pool_default_pg_autoscale_mode = off',
            'osd_crush_chooseleaf_type = 0', 'mon_allow_pool_size_one = true',
            'mon_allow_pool_delete = true', 'mon_warn_on_pool_no_redundancy = false',
            'mon_pg_warn_min_per_osd = 0', 'ms_bind_ipv4 = true', 'ms_bind_ipv6 = false',
            'osd_mon_report_interval = 1', 'mgr_stats_period = 1',
            # Keys only where named: a [global] keyring would be looked for per daemon.
            '[client]', 'keyring = %s/$cluster.$name.keyring' % d,
            '[mon]', 'keyring = $mon_data/keyring', 'mon_data = %s/mon/$cluster-$id' % d,
            'mon_cluster_log_file = %s/log/$cluster.log' % d,
            'auth_allow_insecure_global_id_reclaim = false',
            # The machine's root file system may well be more than 70 % full.
            'mon_data_avail_warn = 5',
            # Only the manager's always-on modules (no dashboard, iostat, nfs, restful).
            'mgr_initial_modules = ',
            '[mgr]', 'keyring = $mgr_data/keyring', 'mgr_data = %s/mgr/$cluster-$id' % d,
            '[osd]', 'keyring = $osd_data/keyring', 'osd_data = %s/osd/$cluster-$id' % d,
            'osd_objectstore = bluestore', 'bluestore_block_create = true',
            'bluestore_block_size = %d' % BLOCK_SIZE, 'bluestore_block_db_create = false',
            'bluestore_block_wal_create = false', 'bluestore_fsck_on_mkfs = false',
            'osd_memory_target = 939524096', 'osd_op_num_shards = 1',
            'osd_op_num_threads_per_shard = 2',
            # ext4's extended attributes are short.
            'osd_max_object_name_len = 460', 'osd_max_object_namespace_len = 64', ''])

    def _daemon(self, name: str, ident: str) -> None:
        """A daemon in the foreground (``-f``) in a session of its own, recorded."""
        daemon = process.Process(name, [name, '-c', self.conf_file, '-f', '-i', ident],
                                 os.path.join(self.log_dir, name + '.stdout'))
        self.daemons[name] = daemon
        daemon.start()
        assert daemon.pid is not None
        self._record['pids'][name] = daemon.pid
        self._save()

    @staticmethod
    def _pool_commands() -> str:
        """The pools, tagged for RBD, as commands for one ``ceph`` run reading them from
        stdin (each run of the CLI costs a Python start)."""
        commands = []
        for pool in POOLS:
            commands += ['osd pool create %s %d %d' % (pool, PG_NUM, PG_NUM),
                         'osd pool application enable %s rbd' % pool]
        return '\n'.join(commands) + '\n'

    def _check_pools(self) -> None:
        existing = set(self.ceph('osd', 'pool', 'ls').split())
        if not existing >= set(POOLS):
            raise RuntimeError('pools %s missing after creation; see %s'
                               % (', '.join(sorted(set(POOLS) - existing)), self.log_dir))

    def status(self) -> dict:
        return json.loads(self.ceph('status', '--format', 'json'))

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until the OSD is up, the manager active and every placement group active."""
        deadline = time.monotonic() + max(timeout, 1.0)
        while True:
            for name, daemon in self.daemons.items():
                if not daemon.running():
                    raise RuntimeError('%s exited:\n%s' % (name, daemon.tail()))
            status = self.status()
            pgs = status['pgmap']
            if (status['osdmap'].get('num_up_osds') == 1 and status['mgrmap'].get('available')
                    and pgs.get('num_pgs') and all(
                        s['state_name'].startswith('active')
                        for s in pgs.get('pgs_by_state', []))):
                return
            if time.monotonic() > deadline:
                raise TimeoutError('Ceph in %s not ready after %.0f s: %s' % (
                    self.dir, timeout, json.dumps(status.get('health'))))
            time.sleep(0.3)

    # -- tools ---------------------------------------------------------------------------

    def ceph(self, *args: str, user: str = 'admin') -> str:
        """``ceph <args>`` on this cluster as ``client.<user>``; returns its output."""
        return self._run(['ceph', '-c', self.conf_file, '--id', user, *args])

    def rbd(self, *args: str, user: str = 'admin') -> str:
        return self._run(['rbd', '-c', self.conf_file, '--id', user, *args])

    def _run(self, argv: list[str], stdin: str | None = None) -> str:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                input=stdin, stdin=None if stdin is not None
                                else subprocess.DEVNULL)
        if result.returncode != 0:
            raise RuntimeError('%s failed (%s): %s' % (' '.join(argv), result.returncode,
                                                       (result.stderr or result.stdout)
                                                       .strip()[-2000:]))
        return result.stdout

    def _popen(self, name: str, argv: list[str], stdin: bool = False
               ) -> subprocess.Popen[bytes]:
        with open(os.path.join(self.log_dir, name + '.log'), 'ab') as log:
            return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.PIPE if stdin else subprocess.DEVNULL)

    def _save(self) -> None:
        if self._on_record is not None:
            self._on_record(self.record)

    # -- stop ----------------------------------------------------------------------------

    def stop(self, remove: bool = True) -> list[str]:
        """Stop the daemons (OSD first) and, with ``remove``, delete the folder;
        returns the errors met (``leftovers()`` says what is still there)."""
        errors = []
        for name in DAEMONS:
            daemon = self.daemons.get(name)
            if daemon is not None:
                try:
                    daemon.stop(timeout=10)
                except Exception as exc:
                    errors.append('stopping %s: %r' % (name, exc))
        return errors + teardown(self.record, remove)

    def leftovers(self, removed: bool = True) -> list[str]:
        return leftovers(self.record, removed)


# -- teardown and checks, from a record alone --------------------------------------------

def processes(record: CephRecord) -> dict[str, int]:
    """The cluster's running daemons by name: those recorded and any other whose command
    line names its folder (pids get reused: a recorded one must name it too)."""
    found = subprocess.run(['pgrep', '-f', record['dir'] + '/'], capture_output=True,
                           text=True).stdout.split()
    pids = {'pid %s' % pid: int(pid) for pid in found}
    pids.update(record['pids'])
    return {name: pid for name, pid in pids.items() if alive(pid) and _ours(pid, record)}


def _ours(pid: int, record: CephRecord) -> bool:
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return (record['dir'] + '/').encode() in f.read()
    except OSError:
        return False


def teardown(record: CephRecord, remove: bool = True, timeout: float = 10.0) -> list[str]:
    """Stop every daemon of ``record`` (SIGTERM, SIGKILL after ``timeout``) and, with
    ``remove``, delete its folder; returns the errors met."""
    errors: list[str] = []
    pids = processes(record)
    for name in DAEMONS:  # the OSD first, as stop() does
        if name in pids and alive(pids[name]):
            os.kill(pids[name], signal.SIGTERM)
            wait_gone([pids[name]], timeout / 2)
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        left = [pid for pid in pids.values() if alive(pid)]
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not wait_gone(left, wait):
            break
    still = processes(record)
    if still:
        errors.append('Ceph daemons still running: %s' % still)
    elif remove and os.path.exists(record['dir']):
        try:
            shutil.rmtree(record['dir'])
        except OSError as exc:
            errors.append('removing %s: %r' % (record['dir'], exc))
    return errors


def leftovers(record: CephRecord, removed: bool = True) -> list[str]:
    """The daemons of ``record`` still running and, if it should have gone, its folder."""
    left = ['process %s (pid %d)' % item for item in processes(record).items()]
    if removed and os.path.exists(record['dir']):
        left.append('ceph dir %s' % record['dir'])
    return left
