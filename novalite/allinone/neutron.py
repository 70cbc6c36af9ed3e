"""The real Neutron (ML2/OVN): OVS and OVN for the compute hosts (``novalite.allinone.ovn``)
and Neutron's API under gunicorn, for novalite-all and the devstack-style stack.

Neutron pins versions of shared libraries that differ from novalite's, so it lives in a
virtualenv of its own (``tools/setup.sh`` makes ``.venv-neutron`` beside ``.venv``). No
agents and no message bus: OVN answers DHCP itself, and the API talks to the OVN
databases over unix sockets (``transport_url = fake://``). Requests pass unchecked
(``auth_strategy = noauth``: send no project header, resources belong to Neutron's fake
project). Neutron sends its events (``network-vif-plugged``...) to the novalite API given
as ``nova_url``, with the noauth2 admin token. Given a ``KeystoneAuth`` instead, Neutron
checks tokens with keystonemiddleware and posts its events as a service user, to the
compute endpoint in Keystone's catalog. ``../shared/NEUTRON.md`` is the recipe this
follows.

Neutron's database is the subclass's (``_database_url``): MariaDB in both users, since
Neutron's migrations refuse SQLite and its OVN driver fails there ("database is locked"
bumping a port's revision). The schema is made or upgraded only when it is not at the
heads the installed Neutron ships, so a database kept from an earlier start costs nothing.
"""
from __future__ import annotations

import configparser
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import requests
import sqlalchemy as sa

from novalite import executor
from novalite.allinone import ovn, process
from novalite.allinone.glance import free_port
from novalite.allinone.ovn import Chassis, NetworkRecord

ENV_VAR = 'NOVALITE_NEUTRON_VENV'
NOVA_TOKEN = 'admin:admin'
SERVICE_PLUGINS = ('ovn-router', 'auto_allocate')
# gunicorn workers; Neutron learns the count from ASGI_WORKERS only (see _env).
WORKERS = 1
OVN_AGENT_TYPES = ('OVN Controller agent', 'OVN Controller Gateway agent')
# Where the installed Neutron names the revisions 'upgrade heads' ends at.
_HEAD_FILES = ('lib/python3*/site-packages/neutron/db/migration/alembic_migrations/'
               'versions/%s_HEAD')
# The WSGI module gunicorn serves: Neutron hands sys.argv[1:] (gunicorn's) to oslo.config.
_WSGI_SHIM = ('"""Neutron\'s WSGI application, with gunicorn\'s arguments hidden from it."""\n'
              'import sys\n\nsys.argv = sys.argv[:1]\n'
              'from neutron.wsgi.api import application  # noqa: E402,F401\n')
# gunicorn's hooks: the worker leaves at once on gunicorn's SIGTERM. Left to gunicorn's own
# handler it never left (Neutron's threads), and gunicorn sent SIGKILL after
# --graceful-timeout: 7 s per stop instead of 0.3 s. An API worker has no state to save.
_GUNICORN_CONF = ('"""gunicorn hooks for Neutron\'s API."""\nimport os\nimport signal\n\n\n'
                  'def post_worker_init(worker):\n'
                  '    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))\n')

Sections = dict[str, dict[str, Any]]


def default_venv() -> str:
    """``$NOVALITE_NEUTRON_VENV``, else ``.venv-neutron`` beside this interpreter's venv."""
    return os.environ.get(ENV_VAR) or os.path.join(os.path.dirname(sys.prefix),
                                                   '.venv-neutron')


def short_prefix(name: str) -> str:
    """``nl`` and 6 hex digits derived from a name: short enough to prefix link names
    (15 characters at most), so teardown can tell one environment's devices."""
    return 'nl' + hashlib.sha1(name.encode()).hexdigest()[:6]


def schema_heads(venv: str) -> set[str]:
    """The alembic revisions ``neutron-db-manage upgrade heads`` ends at for the Neutron
    installed in ``venv`` (its expand and contract heads); empty if it does not say."""
    heads = set()
    for branch in ('EXPAND', 'CONTRACT'):
        for path in glob.glob(os.path.join(venv, _HEAD_FILES % branch)):
            with open(path) as f:
                heads.add(f.read().strip())
    return heads


def schema_revisions(db_url: str) -> set[str]:
    """The revisions recorded in the database's ``alembic_version`` (none: no schema)."""
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table('alembic_version'):
                return set()
            return set(conn.exec_driver_sql('SELECT version_num FROM alembic_version')
                       .scalars())
    finally:
        engine.dispose()


def write_ini(path: str, sections: Sections) -> None:
    """An oslo.config file: booleans lower-case, sequences comma-separated."""
    parser = configparser.ConfigParser(interpolation=None)
    for section, options in sections.items():
        values = {}
        for key, value in options.items():
            if isinstance(value, bool):
                value = str(value).lower()
            elif isinstance(value, (list, tuple)):
                value = ','.join(str(v) for v in value)
            values[key] = str(value)
        parser[section] = values
    with open(path, 'w') as conf:
        parser.write(conf)


@dataclass(frozen=True)
class KeystoneAuth:
    """Neutron behind a Keystone (``auth_strategy = keystone``).

    :param authtoken: ``[keystone_authtoken]``: Neutron's service user, which validates
        the tokens it is sent
    :param nova: ``[nova]``: keystoneauth options of the user Neutron posts its events
        as (password auth and ``region_name``: the compute API is found in the catalog)
    :param client: the ``[neutron]`` section of a novalite daemon (its service user;
        Neutron is found in the catalog)
    :param token: an admin token for this harness's own calls (``api()``, the readiness
        check); ``None`` while Keystone cannot give one yet
    """

    authtoken: dict[str, Any]
    nova: dict[str, Any]
    client: dict[str, Any]
    token: Callable[[], str | None]


class NeutronOnOvn:
    """OVS/OVN with a chassis per host in ``hosts``, and Neutron's API on
    ``127.0.0.1:port``, all state under ``state_dir``; the database is a subclass's.

    :param hosts: compute host names; each gets an OVN chassis with that ``system-id``,
        so Neutron binds ports to those names. The first one's ``br-int`` is in the root
        network namespace, each other one's in a namespace of its own.
    :param nova_url: the novalite API's root URL, where Neutron posts its events
    :param prefix: names the namespaces and devices (``short_prefix``)
    :param venv: Neutron's virtualenv (``default_venv()``)
    :param on_record: called with a copy of the ``NetworkRecord`` each time it grows
    :param port: the API's port on 127.0.0.1 (a free one)
    :param service_plugins: Neutron's ``service_plugins`` (L3 on OVN and the
        auto-allocated topology)
    :param keystone: Neutron behind this Keystone; ``None``: ``noauth``, and events
        sent to ``nova_url``
    """

    def __init__(self, state_dir: str, hosts: Sequence[str], nova_url: str, prefix: str,
                 venv: str | None = None,
                 on_record: Callable[[NetworkRecord], None] | None = None,
                 port: int | None = None,
                 service_plugins: Sequence[str] = SERVICE_PLUGINS,
                 keystone: KeystoneAuth | None = None) -> None:
        self.dir = os.path.abspath(state_dir)
        self.keystone = keystone
        self.hosts = tuple(hosts)
        self.nova_url = nova_url
        self.venv = venv or default_venv()
        self.service_plugins = tuple(service_plugins)
        self.port = port or free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.prefix = prefix
        self.etc_dir = os.path.join(self.dir, 'etc')
        self.log_dir = os.path.join(self.dir, 'log')
        self.tmp_dir = os.path.join(self.dir, 'tmp')
        self.ledger = ovn.Ledger(ovn.new_record(self.dir, self.prefix), on_record)
        self.ovn = ovn.OvnEnvironment(os.path.join(self.dir, 'ovs'), self.hosts,
                                      self.prefix, self.ledger)
        self.api_process = process.Process('neutron-api', self._gunicorn_argv(),
                                           os.path.join(self.log_dir, 'gunicorn.log'),
                                           self._env())
        # Seconds from start() until: OVS/OVN ran ('ovn'), the schema was at its heads
        # ('db'), the API answered with every chassis alive ('up'); how long stop() took
        # ('stop'). 'schema' says what start() did to it: 'made', or 'kept' at its heads.
        self.timings: dict[str, float] = {}
        self.schema = ''
        self._started: Future[str] | None = None
        # Set by stop(): a start still under way gives up at its next step.
        self._stopping = threading.Event()

    @property
    def record(self) -> NetworkRecord:
        return self.ledger.snapshot()

    def chassis(self, host: str) -> Chassis:
        """Where ``host``'s switch is: its namespace, ``ovsdb_connection``, ``env()``."""
        return self.ovn.chassis[host]

    def _bin(self, name: str) -> str:
        path = os.path.join(self.venv, 'bin', name)
        if not os.path.exists(path):
            raise RuntimeError('%s not found: run tools/setup.sh (it installs Neutron in %s)'
                               % (path, self.venv))
        return path

    def _env(self) -> dict[str, str]:
        # ASGI_WORKERS: without it (or uwsgi/mod_wsgi) Neutron counts zero API workers,
        # and its OVN hash ring then drops every OVSDB event. TMPDIR: Neutron writes
        # neutron_start_time<pid> files to the temporary folder.
        return process.child_env(ASGI_WORKERS=str(WORKERS), TMPDIR=self.tmp_dir,
                                 OS_NEUTRON_CONFIG_DIR=self.etc_dir)

    def _gunicorn_argv(self) -> list[str]:
        return [os.path.join(self.venv, 'bin', 'gunicorn'), '--no-control-socket',
                '--bind', '127.0.0.1:%d' % self.port, '--workers', str(WORKERS),
                '--timeout', '300',
                # Should the worker not leave on SIGTERM (see _GUNICORN_CONF), SIGKILL
                # after 5 s, not gunicorn's default 30.
                '--graceful-timeout', '5',
                # Its title ("gunicorn: master [<name>]") is how teardown knows it.
                '--name', self.prefix + '-neutron-api',
                '--pid', os.path.join(self.dir, 'neutron-api.pid'),
                '--config', self._conf('gunicorn_conf.py'),
                '--pythonpath', self.etc_dir, 'neutron_api_wsgi:application']

    # -- start ---------------------------------------------------------------------------

    def check(self) -> None:
        """Fail before anything is made: not root, no Open vSwitch or OVN, no Neutron
        virtualenv, or another environment running or left behind. Once it passed this
        process holds the machine's claim (``ovn.OvnEnvironment.claim``) until ``stop()``.

        :raises ovn.LeftoverError: another environment runs, or left its devices
        :raises RuntimeError: anything else missing
        """
        self.check_host()
        self.ovn.claim()

    def check_host(self) -> None:
        """:raises RuntimeError: not root, or Open vSwitch, OVN or Neutron missing"""
        if os.geteuid() != 0:
            raise RuntimeError('the network environment needs root (namespaces, devices)')
        for tool in ovn.TOOLS:
            if shutil.which(tool) is None:
                raise RuntimeError('%s not found: run tools/setup.sh (it installs Open '
                                   'vSwitch and OVN)' % tool)
        self._bin('gunicorn')

    def _database_url(self) -> str:
        """Neutron's database, made if it must be (its schema is ``start()``'s concern).

        Called before OVS/OVN start: a subclass may reset what must match the database
        (the OVN northbound database mirrors Neutron's networks and ports).
        """
        raise NotImplementedError

    def _kept_database(self, heads: set[str]) -> str | None:
        """The URL of a database an earlier start left at ``heads``, if one is known
        without looking at it (``start()`` then starts the API at once, and again should
        the database turn out otherwise); ``None`` by default."""
        return None

    def start(self, timeout: float = 120.0) -> str:
        """Start everything; returns the API's URL once every chassis is an agent alive.

        On failure what was made stays, recorded: call ``stop()``.
        """
        started = time.monotonic()
        self._stopping.clear()
        self.check()
        for path in (self.etc_dir, self.log_dir, self.tmp_dir):
            os.makedirs(path, exist_ok=True)
        heads = schema_heads(self.venv)
        expected = self._kept_database(heads) if heads else None
        if expected is not None:
            # Neutron's imports take seconds before it first reads its database: they
            # start while the database is looked at, on the word of the last start.
            self.write_conf(expected)
            self._start_api()
        db_url = self._database_url()
        self.timings['db'] = time.monotonic() - started
        if heads and schema_revisions(db_url) == heads:
            self.schema = 'kept'
            if expected != db_url:
                self.api_process.stop()
                self.write_conf(db_url)
                self._start_api()
            # OVS and OVN (under a second) while Neutron imports: its OVSDB connections
            # come later, and are retried.
            self._start_ovn(started)
        else:
            self.schema = 'made'
            if expected is not None:
                self.api_process.stop()
            self.write_conf(db_url)
            self._make_schema(started)
            self._start_api()
        self.wait_ready(timeout)
        self.timings['up'] = time.monotonic() - started
        return self.url

    def _make_schema(self, started: float) -> None:
        """``neutron-db-manage upgrade heads`` (about 5 s) while OVS and OVN start."""
        manage = self._db_manage()
        try:
            self._start_ovn(started)
        except BaseException:
            manage.kill()
            manage.wait()
            raise
        deadline = time.monotonic() + 300
        while manage.poll() is None and time.monotonic() < deadline:
            if self._stopping.is_set():
                manage.kill()
            time.sleep(0.05)
        if manage.poll() != 0:
            raise RuntimeError('neutron-db-manage upgrade heads failed (%s); see %s'
                               % (manage.returncode, self._log('db-manage.log')))
        self.timings['db'] = time.monotonic() - started

    def _start_ovn(self, started: float) -> None:
        self.ovn.start()
        self.timings['ovn'] = time.monotonic() - started

    def _start_api(self) -> None:
        self.api_process.start()
        assert self.api_process.pid is not None
        self.ledger.pid('neutron-api', self.api_process.pid)

    def start_background(self) -> None:
        """``start()`` on a thread of its own; ``wait_started()`` collects it."""
        pool = ThreadPoolExecutor(1, thread_name_prefix='neutron-start')
        self._started = pool.submit(self.start)
        pool.shutdown(wait=False)

    def wait_started(self, timeout: float = 180.0,
                     meanwhile: Callable[[], None] | None = None) -> str:
        """The URL, once ``start_background()``'s start is done; re-raises its error.

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

    def _db_manage(self) -> subprocess.Popen[bytes]:
        with open(self._log('db-manage.log'), 'ab') as log:
            return subprocess.Popen(
                [self._bin('neutron-db-manage'), '--config-file', self._conf('neutron.conf'),
                 '--config-file', self._conf('plugins', 'ml2', 'ml2_conf.ini'),
                 'upgrade', 'heads'], env=self._env(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)

    def _conf(self, *path: str) -> str:
        return os.path.join(self.etc_dir, *path)

    def write_conf(self, db_url: str) -> None:
        """neutron.conf, ml2_conf.ini, the paste file and the WSGI shim, in ``etc/``."""
        os.makedirs(self._conf('plugins', 'ml2'), exist_ok=True)
        write_ini(self._conf('neutron.conf'), self.neutron_conf(db_url))
        write_ini(self._conf('plugins', 'ml2', 'ml2_conf.ini'), self.ml2_conf())
        shutil.copy(os.path.join(self.venv, 'etc', 'neutron', 'api-paste.ini'), self.etc_dir)
        with open(self._conf('neutron_api_wsgi.py'), 'w') as shim:
            shim.write(_WSGI_SHIM)
        with open(self._conf('gunicorn_conf.py'), 'w') as hooks:
            hooks.write(_GUNICORN_CONF)

    def neutron_conf(self, db_url: str) -> Sections:
        sections = self._noauth_conf(db_url)
        if self.keystone is not None:
            sections['DEFAULT']['auth_strategy'] = 'keystone'
            sections['keystone_authtoken'] = dict(self.keystone.authtoken)
            sections['nova'] = dict(self.keystone.nova)
        return sections

    def _noauth_conf(self, db_url: str) -> Sections:
        return {
            'DEFAULT': {
                'debug': False, 'host': self.prefix + '-neutron-api',
                'core_plugin': 'ml2', 'service_plugins': self.service_plugins,
                'auth_strategy': 'noauth',
                'api_paste_config': self._conf('api-paste.ini'),
                'state_path': os.path.join(self.dir, 'state'),
                'log_file': self._log('neutron-api.log'),
                'transport_url': 'fake://',
                'notify_nova_on_port_status_changes': True,
                'notify_nova_on_port_data_changes': True,
                # Events leave within a second (the default batches for 2 s).
                'send_events_interval': 1,
                'dhcp_agent_notification': False,
            },
            'database': {'connection': db_url},
            'nova': {'auth_type': 'admin_token', 'token': NOVA_TOKEN,
                     'endpoint': self.nova_url + '/v2.1', 'region_name': 'RegionOne'},
            'oslo_concurrency': {'lock_path': os.path.join(self.dir, 'lock')},
            'oslo_messaging_notifications': {'driver': 'noop'},
        }

    def ml2_conf(self) -> Sections:
        return {
            'ml2': {'type_drivers': 'flat,geneve', 'tenant_network_types': 'geneve',
                    'mechanism_drivers': 'ovn', 'extension_drivers': 'port_security',
                    'overlay_ip_version': 4},
            'ml2_type_geneve': {'vni_ranges': '1:65536', 'max_header_size': 38},
            'ml2_type_flat': {'flat_networks': 'public'},
            'securitygroup': {'enable_security_group': True},
            'ovn': {'ovn_nb_connection': self.ovn.nb_connection,
                    'ovn_sb_connection': self.ovn.sb_connection,
                    'ovn_metadata_enabled': False,
                    'enable_distributed_floating_ip': False},
        }

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait until the API answers and each host's ovn-controller is an agent alive."""
        deadline = time.monotonic() + timeout
        while True:
            if self._stopping.is_set():
                raise RuntimeError('Neutron was stopped while it started')
            if not self.api_process.running():
                raise RuntimeError('neutron-api (gunicorn) exited:\n%s'
                                   % self.api_process.tail())
            missing = set(self.hosts) - self.alive_chassis()
            if not missing:
                return
            if time.monotonic() > deadline:
                raise TimeoutError('timed out after %ss waiting for Neutron on %s and the '
                                   'OVN chassis %s; see %s' % (
                                       timeout, self.url, ', '.join(sorted(missing)),
                                       self._log('neutron-api.log')))
            time.sleep(0.1)

    def alive_chassis(self) -> set[str]:
        """Hosts with an OVN Controller agent alive; empty while the API does not answer."""
        if self.keystone is not None and self.keystone.token() is None:
            return set()
        try:
            resp = self.api('GET', '/agents', timeout=10)
        except requests.RequestException:
            return set()
        if resp.status_code != 200:
            return set()
        return {a['host'] for a in resp.json()['agents']
                if a['agent_type'] in OVN_AGENT_TYPES and a['alive']}

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request to ``/v2.0<path>`` as admin (noauth: no project header; with
        Keystone: the admin token of ``KeystoneAuth.token``)."""
        headers = dict(kwargs.pop('headers', None) or {})
        token = self.keystone.token() if self.keystone is not None else None
        if token is not None:
            headers.setdefault('X-Auth-Token', token)
        return requests.request(method, self.url + '/v2.0' + path, headers=headers,
                                timeout=kwargs.pop('timeout', 60), **kwargs)

    def daemon_conf(self) -> Sections:
        """What a novalite daemon needs to reach this Neutron (noauth: its URL; with
        Keystone: a service user, Neutron found in the catalog); the computes audit
        their ports every 5 s, so tests see a heal soon."""
        if self.keystone is not None:
            return {'neutron': {**self.keystone.client, 'port_audit_interval': 5}}
        return {'neutron': {'endpoint_override': self.url, 'port_audit_interval': 5}}

    # -- stop ----------------------------------------------------------------------------

    def stop(self) -> list[str]:
        """Stop every process, delete the namespaces and devices; returns the errors met
        (``leftovers()`` says what is still there). The database and the OVS/OVN
        databases' files stay."""
        started = time.monotonic()
        self._stopping.set()
        if self._started is not None:
            # A start still under way would go on making things behind the teardown.
            try:
                self._started.result(300)
            except Exception:
                pass
        # gunicorn's graceful stop takes a moment: the switches go meanwhile.
        api = executor.start_thread('neutron-api-stop', self.api_process.stop)
        self.ovn.stop_controllers()
        self.ovn.delete_bridges()
        api.join()
        errors = ovn.teardown(self.record)
        self.ovn.release()
        self.timings['stop'] = time.monotonic() - started
        return errors

    def leftovers(self) -> list[str]:
        return ovn.leftovers(self.record)
