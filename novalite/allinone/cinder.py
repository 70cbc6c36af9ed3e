"""The real Cinder on a one-node Ceph (``novalite.allinone.ceph``): cinder-api under
gunicorn, cinder-scheduler and cinder-volume with the RBD driver, for novalite-all and
the devstack-style stack.

Cinder pins versions of shared libraries that differ from novalite's, so it lives in a
virtualenv of its own (``tools/setup.sh`` makes ``.venv-cinder`` beside ``.venv``, with
Debian's rados and rbd modules linked in). Its three services talk over a message bus
and share a database, both the caller's (``start(db_url, transport_url)``). Requests
pass with ``auth_strategy = noauth`` (send ``X-Auth-Token: user:project``; URLs carry no
project id) or, given a ``KeystoneAuth``, are checked by keystonemiddleware; then a
caller with the ``service`` role in its service token skips Cinder's check with Nova
before an attachment is deleted, and Cinder posts its events to the compute endpoint
of Keystone's catalog. Keystone-less, Cinder posts them (``volume-reimaged``, after it
re-imaged a server's root volume) to ``nova_url`` with the noauth2 admin token.
``../shared/CINDER.md`` is the recipe this follows.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypedDict

import requests
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from novalite import executor
from novalite.allinone import ceph as ceph_cluster
from novalite.allinone import process
from novalite.allinone.ceph import CephCluster, CephRecord
from novalite.allinone.glance import free_port
from novalite.allinone.neutron import (
    NOVA_TOKEN,
    KeystoneAuth,
    Sections,
    short_prefix,
    write_ini,
)
from novalite.allinone.ovn import alive, wait_gone

ENV_VAR = 'NOVALITE_CINDER_VENV'
# Cinder's two RBD backends by name (each its ``volume_backend_name``) and their pools:
# a retype from one to the other migrates a volume (an attached one through the
# compute API's swap). The default type ``__DEFAULT__`` is bound to the first.
BACKENDS = {'ceph': 'volumes', 'ceph2': 'volumes2'}
BACKEND = 'ceph'
# The volume types made at the start, by name: the backend each is bound to.
VOLUME_TYPES = {'__DEFAULT__': 'ceph', 'ceph': 'ceph', 'ceph2': 'ceph2'}
NOAUTH_TOKEN = 'admin:admin'
# The API's microversion for the harness's own calls (attachments with a connector).
MICROVERSION = '3.54'
# Started in this order, stopped in the reverse one.
SERVICES = ('cinder-api', 'cinder-scheduler', 'cinder-volume')
# The WSGI module gunicorn serves: cinder.wsgi.api hands sys.argv[1:] (gunicorn's) to
# oslo.config, so it is given Cinder's own arguments instead.
_WSGI_SHIM = ('"""Cinder\'s WSGI application, with gunicorn\'s arguments replaced."""\n'
              'import sys\n\nsys.argv = ["cinder-api", "--config-file", %r]\n'
              'from cinder.wsgi.api import application  # noqa: E402,F401\n')


class VolumeRecord(TypedDict):
    """What the volume service made, for teardown: its folder, name prefix, the
    Cinder processes' group leaders by name, the Ceph cluster, and (when they go with
    it) Cinder's database and RabbitMQ vhost."""

    dir: str
    prefix: str
    pids: dict[str, int]
    ceph: CephRecord
    database: str | None
    vhost: str | None


def default_venv() -> str:
    """``$NOVALITE_CINDER_VENV``, else ``.venv-cinder`` beside this interpreter's venv."""
    return os.environ.get(ENV_VAR) or os.path.join(os.path.dirname(sys.prefix),
                                                   '.venv-cinder')


def missing() -> str | None:
    """What this machine lacks to run Ceph and Cinder, or None."""
    tools = ceph_cluster.missing_tools()
    if tools:
        return '%s not found (tools/setup.sh installs Ceph)' % ', '.join(tools)
    venv = default_venv()
    if not os.path.exists(os.path.join(venv, 'bin', 'cinder-volume')):
        return '%s missing (tools/setup.sh makes it)' % venv
    if not any(name.startswith('rbd.') for name in os.listdir(_site(venv))):
        return "Debian's rbd module is not linked into %s (tools/setup.sh links it)" % venv
    return None


def _site(venv: str) -> str:
    return os.path.join(venv, 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages')


class CinderOnCeph:
    """Ceph under ``state_dir/ceph`` and Cinder's three services, its API on
    ``127.0.0.1:port``; everything else under ``state_dir``.

    :param prefix: names the Cinder host (``<prefix>-cinder``, so the volume services
        are ``<prefix>-cinder@ceph`` and ``<prefix>-cinder@ceph2``) and the gunicorn
        master's title
    :param venv: Cinder's virtualenv (``default_venv()``)
    :param on_record: called with a copy of the ``VolumeRecord`` each time it grows
    :param keystone: Cinder behind this Keystone: ``authtoken`` its own service user,
        ``nova`` the user it calls the compute API as, ``client`` novalite's service
        user (``daemon_conf``); ``None``: ``noauth``
    """

    def __init__(self, state_dir: str, prefix: str, venv: str | None = None,
                 port: int | None = None,
                 on_record: Callable[[VolumeRecord], None] | None = None,
                 keystone: KeystoneAuth | None = None) -> None:
        self.dir = os.path.abspath(state_dir)
        self.prefix = prefix
        self.venv = venv or default_venv()
        self.port = port or free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.keystone = keystone
        # Glance's URL, for the volumes Cinder makes from images (Glance is in no
        # catalog here); set before the start.
        self.glance_url: str | None = None
        # Keystone-less: the novalite API's root URL, where Cinder posts its events
        # (Cinder's ``[nova]``); set before the start. With Keystone the catalog has it.
        self.nova_url: str | None = None
        self.etc_dir = os.path.join(self.dir, 'etc')
        self.log_dir = os.path.join(self.dir, 'log')
        self.conf_file = os.path.join(self.etc_dir, 'cinder.conf')
        self._on_record = on_record
        self._lock = threading.Lock()
        self.ceph = CephCluster(os.path.join(self.dir, 'ceph'), on_record=self._ceph_record)
        self._record: VolumeRecord = {'dir': self.dir, 'prefix': prefix, 'pids': {},
                                      'ceph': self.ceph.record, 'database': None,
                                      'vhost': None}
        env = process.child_env(TMPDIR=os.path.join(self.dir, 'tmp'))
        self.processes = {name: process.Process(name, argv, os.path.join(
            self.log_dir, name + '.stdout'), env) for name, argv in self._argvs().items()}
        # Seconds from start() until: the schema was made ('db'), Ceph was ready
        # ('ceph'), the API answered with the volume service up ('up'); stop() ('stop').
        self.timings: dict[str, float] = {}
        self._started: Future[str] | None = None
        self._stopping = threading.Event()
        self._ceph_error: Exception | None = None

    @property
    def secret_uuid(self) -> str:
        """The libvirt secret (type ``ceph``) Cinder names in its connection info: a
        compute host needs it defined with ``cinder_key()`` as its value."""
        return self.ceph.secret_uuid

    def cinder_key(self) -> str:
        return self.ceph.cinder_key()

    @property
    def record(self) -> VolumeRecord:
        with self._lock:
            current = self._record
            return {'dir': current['dir'], 'prefix': current['prefix'],
                    'pids': dict(current['pids']), 'ceph': current['ceph'],
                    'database': current['database'], 'vhost': current['vhost']}

    def _changed(self) -> None:
        if self._on_record is not None:
            self._on_record(self.record)

    def _ceph_record(self, record: CephRecord) -> None:
        with self._lock:
            self._record['ceph'] = record
        self._changed()

    def record_shared(self, database: str | None = None, vhost: str | None = None) -> None:
        """Record Cinder's database and vhost, when they go with it (the caller's)."""
        with self._lock:
            self._record['database'] = database
            self._record['vhost'] = vhost
        self._changed()

    def _bin(self, name: str) -> str:
        return os.path.join(self.venv, 'bin', name)

    def _argvs(self) -> dict[str, list[str]]:
        conf = ['--config-file', self.conf_file]
        return {
            'cinder-api': [
                self._bin('gunicorn'), '--no-control-socket', '--bind',
                '127.0.0.1:%d' % self.port, '--workers', '1', '--timeout', '120',
                '--graceful-timeout', '5',
                # Its title ("gunicorn: master [<name>]") is how teardown knows it.
                '--name', self.prefix + '-cinder-api',
                '--pid', os.path.join(self.dir, 'cinder-api.pid'),
                '--pythonpath', self.etc_dir, 'cinder_api_wsgi:application'],
            'cinder-scheduler': [self._bin('cinder-scheduler'), *conf],
            'cinder-volume': [self._bin('cinder-volume'), *conf],
        }

    # -- start ---------------------------------------------------------------------------

    def check(self) -> None:
        """:raises RuntimeError: Ceph or Cinder's virtualenv missing"""
        reason = missing() if self.venv == default_venv() else None
        if reason is None and not os.path.exists(self._bin('cinder-volume')):
            reason = '%s missing (tools/setup.sh makes it)' % self.venv
        if reason is not None:
            raise RuntimeError('Cinder cannot run: %s' % reason)

    def start(self, db_url: str, transport_url: str, timeout: float = 180.0) -> str:
        """Make Ceph and Cinder's schema (at once), start the services; returns the
        API's URL once ``cinder-volume`` is up. On failure what runs stays, recorded:
        call ``stop()``."""
        started = time.monotonic()
        self._stopping.clear()
        self.check()
        for path in (self.etc_dir, self.log_dir, os.path.join(self.dir, 'tmp')):
            os.makedirs(path, exist_ok=True)
        self.write_conf(db_url, transport_url)
        # Ceph (10-15 s) on a thread of its own; the schema (about 7 s) meanwhile, then
        # the API and the scheduler, whose imports take seconds too. The volume service
        # starts once Ceph's pools exist: its driver connects to the cluster and opens
        # the pool at once (its imports cover most of the wait for the PGs).
        ceph = executor.start_thread('ceph-start', self._start_ceph, started)
        sync = self._db_sync()
        try:
            if sync.wait(300) != 0:
                raise RuntimeError('cinder-manage db sync failed (%s); see %s'
                                   % (sync.returncode, self._log('db-sync.log')))
            self.timings['db'] = time.monotonic() - started
            self._start_service('cinder-api')
            self._start_service('cinder-scheduler')
            while ceph.is_alive() and not self.ceph.pools_ready.wait(0.1):
                pass
            if self.ceph.pools_ready.is_set():
                self._start_service('cinder-volume')
        finally:
            if sync.poll() is None:
                sync.kill()
                sync.wait()
            ceph.join()
        if self._ceph_error is not None:
            raise self._ceph_error
        self.wait_ready(timeout - (time.monotonic() - started))
        self.make_volume_types()
        self.timings['up'] = time.monotonic() - started
        return self.url

    def _start_ceph(self, started: float) -> None:
        self._ceph_error = None
        try:
            self.ceph.start()
        except Exception as exc:  # raised by start(), on its own thread
            self._ceph_error = exc
        self.timings['ceph'] = time.monotonic() - started

    def _start_service(self, name: str) -> None:
        if self._stopping.is_set():
            raise RuntimeError('Cinder was stopped while it started')
        daemon = self.processes[name]
        daemon.start()
        assert daemon.pid is not None
        with self._lock:
            self._record['pids'][name] = daemon.pid
        self._changed()

    def start_background(self, db_url: str, transport_url: str) -> None:
        """``start()`` on a thread of its own; ``wait_started()`` collects it."""
        pool = ThreadPoolExecutor(1, thread_name_prefix='cinder-start')
        self._started = pool.submit(self.start, db_url, transport_url)
        pool.shutdown(wait=False)

    def wait_started(self, timeout: float = 240.0,
                     meanwhile: Callable[[], None] | None = None) -> str:
        """The URL once ``start_background()``'s start is done; re-raises its error.

        :param meanwhile: called every 0.1 s while waiting; what it raises ends the wait
        """
        assert self._started is not None, 'start_background() first'
        deadline = time.monotonic() + timeout
        while meanwhile is not None and time.monotonic() < deadline:
            meanwhile()
            if wait([self._started], 0.1).done:
                break
        return self._started.result(max(0.0, deadline - time.monotonic()))

    def _log(self, name: str) -> str:
        return os.path.join(self.log_dir, name)

    def _db_sync(self) -> subprocess.Popen[bytes]:
        with open(self._log('db-sync.log'), 'ab') as log:
            return subprocess.Popen([self._bin('cinder-manage'), '--config-file',
                                     self.conf_file, 'db', 'sync'],
                                    env=process.child_env(), stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def write_conf(self, db_url: str, transport_url: str) -> None:
        """cinder.conf, Cinder's paste and rootwrap files, the WSGI shim, in ``etc/``."""
        shipped = os.path.join(self.venv, 'etc', 'cinder')
        for name in os.listdir(shipped):
            source, target = os.path.join(shipped, name), os.path.join(self.etc_dir, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copy(source, target)
        write_ini(self.conf_file, self.cinder_conf(db_url, transport_url))
        with open(os.path.join(self.etc_dir, 'cinder_api_wsgi.py'), 'w') as shim:
            shim.write(_WSGI_SHIM % self.conf_file)

    def cinder_conf(self, db_url: str, transport_url: str) -> Sections:
        sections: Sections = {
            'DEFAULT': {
                'debug': False, 'host': self.prefix + '-cinder', 'my_ip': '127.0.0.1',
                'state_path': os.path.join(self.dir, 'state'), 'log_dir': self.log_dir,
                'auth_strategy': 'noauth', 'enabled_backends': ','.join(BACKENDS),
                'transport_url': transport_url,
                'api_paste_config': os.path.join(self.etc_dir, 'api-paste.ini'),
                'rootwrap_config': os.path.join(self.etc_dir, 'rootwrap.conf'),
                'osapi_volume_listen': '127.0.0.1',
                'osapi_volume_listen_port': self.port, 'osapi_volume_workers': 1,
                'default_volume_type': '__DEFAULT__',
                # Cinder looks in /etc/cinder for it otherwise, and without it refuses
                # every list filter (an attachment list by server, for one).
                'resource_query_filters_file': os.path.join(self.etc_dir,
                                                            'resource_filters.json'),
                # A service is seen up within seconds of its start, and down soon.
                'report_interval': 2, 'service_down_time': 20,
                # The volume services send their pools' capacity to the scheduler this
                # often (Cinder's default is 60 s): the first report after a start may
                # still say 0 GB (Ceph had no statistics yet), and until the next one
                # the scheduler refuses every volume.
                'periodic_interval': 5,
                # A stop waits for a request under way this long, not a minute.
                'graceful_shutdown_timeout': 5,
            },
            # A shared database server may be near its connection limit.
            'database': {'connection': db_url, 'max_pool_size': 2, 'max_overflow': 3},
            'oslo_concurrency': {'lock_path': os.path.join(self.dir, 'locks')},
            'oslo_messaging_notifications': {'driver': 'noop'},
            'coordination': {'backend_url': 'file://' + os.path.join(self.dir, 'state')},
        }
        for backend, pool in BACKENDS.items():
            sections[backend] = {
                'volume_driver': 'cinder.volume.drivers.rbd.RBDDriver',
                'volume_backend_name': backend, 'rbd_pool': pool,
                'rbd_ceph_conf': self.ceph.conf_file, 'rbd_user': 'cinder',
                'rbd_secret_uuid': self.secret_uuid,
                'rbd_flatten_volume_from_snapshot': False, 'rbd_max_clone_depth': 5,
                'rbd_store_chunk_size': 4, 'rados_connect_timeout': 5,
                'report_discard_supported': True,
            }
        # Cinder's privileged helpers (format checks of images it downloads, os-brick's)
        # start through sudo by default; these services run as root and there may be no
        # sudo: the helper is started directly, from Cinder's virtualenv.
        helper = '%s --config-file %s' % (os.path.join(self.venv, 'bin', 'privsep-helper'),
                                         self.conf_file)
        for section in ('cinder_sys_admin', 'privsep_osbrick'):
            sections[section] = {'helper_command': helper}
        if self.glance_url:
            sections['DEFAULT']['glance_api_servers'] = self.glance_url
        if self.keystone is not None:
            sections['DEFAULT']['auth_strategy'] = 'keystone'
            sections['keystone_authtoken'] = {
                **self.keystone.authtoken, 'service_token_roles': 'service',
                'service_token_roles_required': True}
            # Cinder's nova notifier: a user with the service role, the compute API
            # found in the catalog (its public endpoint in the user's region).
            sections['nova'] = {'interface': 'public', **self.keystone.nova}
        elif self.nova_url:
            # keystoneauth's admin_token: this endpoint, the noauth2 admin's token.
            sections['nova'] = {'auth_type': 'admin_token', 'token': NOVA_TOKEN,
                                'endpoint': self.nova_url.rstrip('/') + '/v2.1',
                                'region_name': 'RegionOne'}
        return sections

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the API answers and lists the scheduler and the volume service of
        each backend up."""
        deadline = time.monotonic() + max(timeout, 1.0)
        backends = {'%s-cinder@%s' % (self.prefix, name) for name in BACKENDS}
        while True:
            if self._stopping.is_set():
                raise RuntimeError('Cinder was stopped while it started')
            for name, daemon in self.processes.items():
                if not daemon.running():
                    raise RuntimeError('%s exited:\n%s' % (name, daemon.tail()))
            up = self._services_up()
            # Up in the database is not enough: until the scheduler has had each volume
            # service's capabilities, with a capacity, it finds no backend for a volume
            # (which then goes to ``error`` at once); its pools show what it has had.
            if 'cinder-scheduler' in {s['binary'] for s in up} and backends <= {
                    s['host'] for s in up if s['binary'] == 'cinder-volume'
            } and backends <= self._scheduled_backends():
                return
            if time.monotonic() > deadline:
                raise TimeoutError('timed out after %.0f s waiting for Cinder on %s and '
                                   'its volume services; see %s' % (timeout, self.url,
                                                                    self.log_dir))
            time.sleep(0.2)

    def services_up(self) -> set[str]:
        """The binaries ``GET /os-services`` lists up; empty while the API does not
        answer (or, with Keystone, no token can be had yet)."""
        return {s['binary'] for s in self._services_up()}

    def _services_up(self) -> list[dict[str, Any]]:
        try:
            resp = self.api('GET', '/os-services', timeout=10)
        except (requests.RequestException, RuntimeError):
            return []
        if resp.status_code != 200:
            return []
        return [s for s in resp.json()['services'] if s['state'] == 'up']

    def _scheduled_backends(self) -> set[str]:
        """``host@backend`` of every pool Cinder's scheduler can place a volume in: it
        has had that volume service's capabilities, and they give the pool a capacity
        (a first report made before Ceph had statistics says 0 GB, and the scheduler's
        capacity filter then refuses every volume); empty while the API does not
        answer."""
        try:
            resp = self.api('GET', '/scheduler-stats/get_pools', params={'detail': 'True'},
                            timeout=10)
        except (requests.RequestException, RuntimeError):
            return set()
        if resp.status_code != 200:
            return set()
        ready = set()
        for pool in resp.json().get('pools', []):
            total = (pool.get('capabilities') or {}).get('total_capacity_gb')
            if total == 'infinite' or (isinstance(total, (int, float)) and total > 0):
                ready.add(pool['name'].split('#', 1)[0])
        return ready

    def make_volume_types(self) -> None:
        """``VOLUME_TYPES``: each bound to its backend (``volume_backend_name``), the
        default type ``__DEFAULT__`` included, so a volume without a type lands in the
        first backend's pool.

        :raises RuntimeError: Cinder refused
        """
        def check(resp: requests.Response, what: str) -> dict[str, Any]:
            if resp.status_code not in (200, 202):
                raise RuntimeError('Cinder refused to %s: %s %s' % (
                    what, resp.status_code, resp.text[:300]))
            body: dict[str, Any] = resp.json()
            return body
        existing = {t['name']: t['id'] for t in check(
            self.api('GET', '/types', params={'is_public': 'None'}),
            'list the volume types')['volume_types']}
        for name, backend in VOLUME_TYPES.items():
            specs = {'volume_backend_name': backend}
            if name in existing:
                check(self.api('POST', '/types/%s/extra_specs' % existing[name],
                               json={'extra_specs': specs}),
                      'bind the volume type %s to %s' % (name, backend))
            else:
                check(self.api('POST', '/types', json={'volume_type': {
                    'name': name, 'os-volume-type-access:is_public': True,
                    'extra_specs': specs}}), 'make the volume type %s' % name)

    def api(self, method: str, path: str, microversion: str = MICROVERSION,
            **kwargs: Any) -> requests.Response:
        """A request to ``/v3<path>`` as admin (noauth: ``admin:admin``; with Keystone:
        the admin token of ``KeystoneAuth.token``), as a service (``X-Service-Roles``:
        noauth builds the request's context from these headers)."""
        headers = {'OpenStack-API-Version': 'volume ' + microversion,
                   **(kwargs.pop('headers', None) or {})}
        if self.keystone is None:
            headers.setdefault('X-Auth-Token', NOAUTH_TOKEN)
            headers.setdefault('X-Service-Roles', 'service')
        else:
            token = self.keystone.token()
            if token is None:
                raise RuntimeError('no Keystone token yet')
            headers.setdefault('X-Auth-Token', token)
        return requests.request(method, self.url + '/v3' + path, headers=headers,
                                timeout=kwargs.pop('timeout', 60), **kwargs)

    def daemon_conf(self) -> Sections:
        """What a novalite daemon needs to reach this Cinder: noauth, its URL; with
        Keystone, Cinder found in the catalog as novalite's service user, and that user's
        token sent along with users' (its ``service`` role lets Cinder skip asking the
        compute API before deleting an attachment)."""
        common = {'http_retries': 3, 'cross_az_attach': True}
        if self.keystone is None:
            return {'cinder': {'endpoint_template': self.url + '/v3', **common}}
        user = {k: v for k, v in self.keystone.client.items() if k != 'region_name'}
        return {
            'cinder': {'catalog_info': 'volumev3::internalURL',
                       'os_region_name': self.keystone.client.get('region_name',
                                                                  'RegionOne'),
                       **common, **user},
            'service_user': {'send_service_user_token': True, **user},
        }

    # -- stop ----------------------------------------------------------------------------

    def stop(self, remove: bool = True) -> list[str]:
        """Stop Cinder's services, then Ceph (its folder deleted with ``remove``);
        returns the errors met (``leftovers()`` says what is still there)."""
        started = time.monotonic()
        self._stopping.set()
        if self._started is not None:
            try:
                self._started.result(300)
            except Exception:
                pass
        errors = []
        for daemon in self.processes.values():
            if daemon.running():
                daemon.signal(signal.SIGTERM)
        for name in reversed(SERVICES):
            try:
                self.processes[name].stop(timeout=10)
            except Exception as exc:
                errors.append('stopping %s: %r' % (name, exc))
        errors += teardown_processes(self.record)
        errors += self.ceph.stop(remove)
        self.timings['stop'] = time.monotonic() - started
        return errors

    def leftovers(self, removed: bool = True) -> list[str]:
        return leftovers(self.record, removed)


# -- teardown and checks, from a record alone --------------------------------------------

def _ours(pid: int, record: VolumeRecord) -> bool:
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            cmdline = f.read().decode(errors='replace')
    except OSError:
        return False
    # gunicorn retitles itself ("gunicorn: master [<prefix>-cinder-api]").
    return record['dir'] + '/' in cmdline or '[%s-cinder' % record['prefix'] in cmdline


def processes(record: VolumeRecord) -> dict[str, int]:
    """Cinder's running processes by name: the recorded group leaders and any other
    naming its folder or its gunicorn title (a worker whose master was killed)."""
    found = subprocess.run(['pgrep', '-f', '%s/etc/|\\[%s-cinder' % (
        record['dir'], record['prefix'])], capture_output=True, text=True).stdout.split()
    pids = {'pid %s' % pid: int(pid) for pid in found}
    pids.update(record['pids'])
    return {name: pid for name, pid in pids.items() if alive(pid) and _ours(pid, record)}


def teardown_processes(record: VolumeRecord, timeout: float = 10.0) -> list[str]:
    """Stop Cinder's processes of ``record``: SIGTERM to the recorded process groups
    (workers go with their leader) and to any other process of it, SIGKILL to what
    outlives ``timeout``; returns errors. Zombies (children of this process, not yet
    reaped) count as gone."""
    for sig, grace in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        running = processes(record)
        if not running:
            return []
        for pid in {*record['pids'].values(), *running.values()}:
            try:
                os.killpg(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in running.values():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        wait_gone(list(running.values()), grace)
    left = processes(record)
    return ['Cinder processes still running: %s' % left] if left else []


def teardown(record: VolumeRecord, remove: bool = True) -> list[str]:
    """Stop Cinder's processes and the Ceph cluster of ``record`` (from any process),
    deleting the cluster's folder with ``remove``; returns the errors met."""
    return teardown_processes(record) + ceph_cluster.teardown(record['ceph'], remove)


def leftovers(record: VolumeRecord, removed: bool = True) -> list[str]:
    """Cinder's processes and the Ceph cluster's daemons (and folder) still there."""
    left = ['process %s (pid %d)' % item for item in processes(record).items()]
    return left + ceph_cluster.leftovers(record['ceph'], removed)


# -- novalite-all's ---------------------------------------------------------------------

RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672'


class AllInOneCinder(CinderOnCeph):
    """Cinder and Ceph for novalite-all (noauth), under its state folder's ``cinder/``.

    Ceph is made anew at each start, so Cinder's database (on the MariaDB server
    ``db_server``, its name kept in the state folder) is made anew with it, and its
    three services get a RabbitMQ vhost of the same name on ``rabbit_url``'s broker
    (made with ``rabbitmqctl``). A stop removes all of it: volumes do not outlive
    novalite-all. What a killed novalite-all left running is removed by the next start
    with its state folder (``check()``), found from the record kept there while it ran.
    """

    def __init__(self, state_dir: str, db_server: str, rabbit_url: str = RABBIT_URL,
                 venv: str | None = None, port: int | None = None) -> None:
        state_dir = os.path.abspath(state_dir)
        os.makedirs(state_dir, exist_ok=True)
        self.record_file = os.path.join(state_dir + '.json')
        self.db_server = db_server
        self.rabbit_url = rabbit_url
        self.name = 'novalite_all_cinder_%s' % short_prefix('novalite-all:' + state_dir)[2:]
        # What a killed novalite-all of this state folder left, removed by check().
        self.removed: list[str] = []
        super().__init__(state_dir, short_prefix('novalite-all:' + state_dir), venv=venv,
                         port=port, on_record=self._save_record)

    def _save_record(self, record: VolumeRecord) -> None:
        tmp = self.record_file + '.tmp'
        with open(tmp, 'w') as out:
            json.dump(record, out)
        os.replace(tmp, self.record_file)

    def check(self) -> None:
        """``CinderOnCeph.check``, then what a killed novalite-all of this state folder
        left running removed, and the message bus's ``rabbitmqctl`` looked for."""
        super().check()
        if shutil.which('rabbitmqctl') is None:
            raise RuntimeError('Cinder cannot run: rabbitmqctl not found (its services '
                               'talk over RabbitMQ, on %s)' % self.rabbit_url)
        try:
            with open(self.record_file) as f:
                record: VolumeRecord = json.load(f)
        except FileNotFoundError:
            return
        self.removed = leftovers(record, removed=False)
        errors = teardown(record)
        if errors:
            raise RuntimeError('could not remove what an earlier novalite-all of this '
                               'state folder left running: %s' % '; '.join(errors))
        os.remove(self.record_file)

    def launch(self) -> None:
        """The database and vhost made anew, then ``start()``, on a thread of its own
        (``wait_started()`` collects it)."""
        pool = ThreadPoolExecutor(1, thread_name_prefix='cinder-start')
        self._started = pool.submit(self._make_and_start)
        pool.shutdown(wait=False)

    def _make_and_start(self) -> str:
        self.record_shared(self.name, self.name)
        db_url = self._remake_database()
        _rabbitmqctl('add_vhost', self.name, ok_if='already exists')
        _rabbitmqctl('set_permissions', '-p', self.name, make_url(
            self.rabbit_url.replace('rabbit://', 'amqp://', 1)).username or 'guest',
            '.*', '.*', '.*')
        return self.start(db_url, '%s/%s' % (self.rabbit_url.rstrip('/'), self.name))

    def _engine(self) -> sa.Engine:
        return sa.create_engine(self.db_server, isolation_level='AUTOCOMMIT',
                                poolclass=sa.pool.NullPool)

    def _remake_database(self) -> str:
        engine = self._engine()
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % self.name)
                conn.exec_driver_sql('CREATE DATABASE `%s` CHARACTER SET utf8mb4' % self.name)
        except sa.exc.OperationalError as exc:
            raise RuntimeError("Cinder's database server %s cannot be reached (%s): start "
                               'MariaDB there, or name another with --cinder-db-server'
                               % (self.db_server, exc.orig)) from exc
        finally:
            engine.dispose()
        return make_url(self.db_server).set(database=self.name).update_query_dict(
            {'charset': 'utf8mb4'}).render_as_string(hide_password=False)

    def stop(self, remove: bool = True) -> list[str]:
        """``CinderOnCeph.stop``, then the database and vhost; the record goes once
        nothing it lists is left."""
        errors = super().stop(remove)
        engine = self._engine()
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % self.name)
        except sa.exc.OperationalError as exc:
            errors.append('dropping database %s: %s' % (self.name, exc.orig))
        finally:
            engine.dispose()
        try:
            _rabbitmqctl('delete_vhost', self.name, ok_if='does not exist')
        except RuntimeError as exc:
            errors.append(str(exc))
        if not errors and not self.leftovers() and os.path.exists(self.record_file):
            os.remove(self.record_file)
        return errors


def _rabbitmqctl(*args: str, ok_if: str = '') -> None:
    result = subprocess.run(['rabbitmqctl', *args], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    if result.returncode != 0 and not (ok_if and ok_if in result.stdout + result.stderr):
        raise RuntimeError('rabbitmqctl %s failed (%s): %s' % (
            ' '.join(args), result.returncode, result.stderr.strip()))
