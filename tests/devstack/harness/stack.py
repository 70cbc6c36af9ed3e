"""The devstack-style stack: real Placement, real Glance, RabbitMQ, MariaDB or PostgreSQL,
and each novalite daemon a process of its own started from its systemd unit's command line;
with ``network=True`` also the real Neutron on OVN (``tests.devstack.harness.neutron``);
with ``volumes=True`` also the real Cinder on a one-node Ceph
(``tests.devstack.harness.cinder``); with ``consoles=True`` also the console proxy daemons
novalite-novncproxy and novalite-serialproxy.

With ``netns_computes=True`` each compute host whose OVN chassis has a network namespace
of its own runs its novalite-compute inside it, so that what the compute makes (os-vif's
taps) and what its hypervisor runs are beside that host's switch, as on a machine of its
own; a forwarder (``tests.devstack.harness.forward``) brings the stack's services on 127.0.0.1
into the namespace, so the compute's configuration is any host's.

Everything a run creates is named ``<name>...`` (``nlds_<random>`` unless given) and written
down in ``<state_dir>/stack.json`` as soon as it exists, so ``down`` -- from this process or
from ``python -m tests.devstack.harness down`` in another shell -- removes exactly that, also
after a start-up that failed half-way.
"""
from __future__ import annotations

import configparser
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from novalite.allinone import glance as glance_process
from novalite.allinone.cinder import VolumeRecord
from novalite.allinone.ovn import NetworkRecord
from tests.devstack.harness import backends, config, dbgate, process
from tests.devstack.harness.cinder import CinderEnvironment
from tests.devstack.harness.keystone import KeystoneProcess
from tests.devstack.harness.neutron import KeystoneAuth, NeutronEnvironment
from tests.devstack.harness.placement import PlacementProcess
from tests.devstack.harness.teardown import DB_GATE, leftovers, teardown

PREFIX = 'nlds_'
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
UNIT_DIR = os.path.abspath(os.path.join(REPO_ROOT, 'etc',
                                        'systemd'))
TOKEN = 'admin:admin'
IMAGE_NAME = 'cirros-tiny'
# A few KiB stand in for the image: the fake driver never reads it.
IMAGE_DATA = b'novalite devstack image\n' * 256
FLAVORS = (('m1.nano', 1, 128, 1), ('m1.tiny', 1, 512, 1))
CONTROLLER_DAEMONS = ('conductor', 'scheduler')
# Daemons that serve no RPC (no heartbeat): ready once they listen.
CONSOLE_PROXIES = ('novncproxy', 'serialproxy')
# Ports of service URLs that name none.
DEFAULT_PORTS = {'rabbit': 5672, 'mysql': 3306, 'postgresql': 5432, 'http': 80,
                 'https': 443}
LOOPBACK_NAMES = ('127.0.0.1', 'localhost')


class Stack:
    """One stack under ``state_dir``; ``up()`` starts it, ``down()`` removes all of it.

    :param backend: ``mysql`` (MariaDB) or ``postgresql``
    :param computes: the compute host names, one novalite-compute process each
    :param conf: extra options for every daemon (``{'DEFAULT': {...}}``)
    :param host_conf: extra options per daemon name (``api``, ``conductor``,
        ``scheduler``, ``compute-<host>``)
    :param auth: ``noauth2`` (tokens ``user:project``) or ``keystone``: a real Keystone
        (``tests.devstack.harness.keystone``), the API behind auth_token, password clouds
    :param network: also the real Neutron (ML2/OVN) with an OVN chassis per compute host
        (``tests.devstack.harness.neutron``); the daemons and clouds.yaml are pointed at it,
        each compute's os-vif at its host's switch. With ``auth='keystone'`` Neutron is
        behind auth_token too, in the catalog as ``network``: the daemons call it as the
        ``nova`` service user (users' calls with the users' tokens), and it posts its
        events as that user
    :param volumes: also the real Cinder (RBD on a one-node Ceph,
        ``tests.devstack.harness.cinder``); the daemons get its ``[cinder]`` options
        (and ``[service_user]``: the ``nova`` user, which has the ``service`` role) and
        clouds.yaml reaches it. With ``auth='keystone'`` it is in the catalog as
        ``volumev3`` and ``block-storage``
    :param netns_computes: with ``network``, run each compute whose chassis has a
        network namespace inside it (see the module docstring)
    :param config_files: more novalite.conf files, given to every daemon after its own
        (``--config-file`` again: their options win over the stack's)
    :param before_daemons: called with the stack once everything the novalite daemons
        use runs (the network environment too) and their config files are written,
        just before they start: e.g. to start a hypervisor in a host's namespace
    :param db_gate: every daemon (Placement and ``novalite-manage`` too) reaches the
        database server through a gate the tests can close (``close_database``), a
        database outage (``tests.devstack.harness.dbgate``); ``query`` still goes direct
    :param db_gate_placement: with ``db_gate``, Placement's database behind the gate too
        (one server for all, as a devstack has it); False keeps Placement out of the
        outage, to tell its part from the novalite daemons'
    :param consoles: also the console proxies novalite-novncproxy (with Debian's noVNC)
        and novalite-serialproxy, each a process with a config file like the API's, on
        ports of their own (``novncproxy_url``, ``serialproxy_url``), which every
        daemon's ``[vnc] novncproxy_base_url`` and ``[serial_console] base_url`` name
    """

    def __init__(self, state_dir: str, backend: str = 'mysql',
                 computes: tuple[str, ...] = ('hostA', 'hostB'),
                 conf: config.Sections | None = None,
                 host_conf: dict[str, config.Sections] | None = None,
                 name: str | None = None, bin_dir: str | None = None,
                 auth: str = 'noauth2', placement_gunicorn: tuple[int, int] = (1, 8),
                 placement_isolation: str = 'default', network: bool = False,
                 netns_computes: bool = False,
                 before_daemons: Callable[[Stack], None] | None = None,
                 config_files: tuple[str, ...] = (), db_gate: bool = False,
                 db_gate_placement: bool = True, volumes: bool = False,
                 consoles: bool = False) -> None:
        """:param placement_gunicorn: Placement's (workers, threads per worker).
        :param placement_isolation: Placement's transaction isolation on MySQL/MariaDB,
            a key of ``placement.ISOLATIONS``.
        """
        self.placement_gunicorn = placement_gunicorn
        self.placement_isolation = placement_isolation
        if backend not in backends.SERVER_URLS:
            raise ValueError('backend must be one of %s' % ', '.join(backends.SERVER_URLS))
        if auth not in ('noauth2', 'keystone'):
            raise ValueError('auth must be noauth2 or keystone')
        self.network = network
        self.netns_computes = netns_computes
        self.before_daemons = before_daemons
        self.neutron: NeutronEnvironment | None = None
        self.volumes = volumes
        self.cinder: CinderEnvironment | None = None
        self.consoles = consoles
        # The proxies' ports, chosen at start-up (with ``consoles``).
        self.console_ports: dict[str, int] = {}
        self.auth = auth
        self.keystone: KeystoneProcess | None = None
        # Set once Keystone has the stack's users and catalog (Neutron waits for it).
        self._identities = threading.Event()
        self.state_dir = os.path.abspath(state_dir)
        self.backend = backend
        self.computes = computes
        self.extra_conf = conf or {}
        self.config_files = tuple(os.path.abspath(path) for path in config_files)
        self.host_conf = host_conf or {}
        self.name = name or PREFIX + uuid.uuid4().hex[:10]
        self.bin_dir = bin_dir or os.path.join(sys.prefix, 'bin')
        self.etc_dir = os.path.join(self.state_dir, 'etc')
        self.log_dir = os.path.join(self.state_dir, 'logs')
        self.record_file = os.path.join(self.state_dir, 'stack.json')
        self.record: dict[str, Any] = {'name': self.name, 'backend': backend,
                                       'databases': [], 'vhost': None, 'pids': {}}
        self.daemons: dict[str, process.Process] = {}
        # The databases as the tests reach them (directly), and as the daemons do
        # (through the gate, when there is one).
        self.db_urls: dict[str, str] = {}
        self.daemon_db_urls: dict[str, str] = {}
        self.db_gate = db_gate
        self.db_gate_placement = db_gate_placement
        self._db_gate_state = ''
        self.placement: PlacementProcess | None = None
        self.glance: glance_process.GlanceProcess | None = None
        self.api_port = 0
        self.api_url = ''
        self.glance_url = ''
        self.image_id = ''
        self.clouds_yaml = os.path.join(self.state_dir, 'clouds.yaml')
        self.timings: dict[str, float] = {}
        self._engines: dict[str, sa.Engine] = {}
        self._glance_thread: threading.Thread | None = None
        self._record_lock = threading.Lock()

    # -- bring-up ------------------------------------------------------------------------

    def up(self) -> Stack:
        """Start everything; on any failure remove what was made, then re-raise."""
        started = time.monotonic()
        try:
            self._up()
        except BaseException:
            self.down(check=False)
            raise
        self.timings['up'] = time.monotonic() - started
        return self

    def _up(self) -> None:
        for path in (self.state_dir, self.etc_dir, self.log_dir):
            os.makedirs(path, exist_ok=True)
        self._save()
        # Known before Neutron starts: its [nova] endpoint, for its events.
        self.api_port = glance_process.free_port()
        self.api_url = 'http://127.0.0.1:%d' % self.api_port
        if self.auth == 'keystone':
            # Its URL too: Neutron's configuration names it.
            self.keystone = KeystoneProcess(os.path.join(self.etc_dir, 'keystone'),
                                            glance_process.free_port(),
                                            os.path.join(self.log_dir, 'keystone.log'))
        if self.network:
            self.neutron = NeutronEnvironment(
                os.path.join(self.state_dir, 'neutron'), self.computes, self.api_url,
                self.name, on_record=self._record_network,
                keystone=self._neutron_keystone())
            self.neutron.check()
        # Glance's port is chosen now: Cinder's configuration names it.
        self.glance = glance_process.GlanceProcess(
            os.path.join(self.state_dir, 'glance'),
            authtoken=self.keystone.authtoken_conf('nova') if self.keystone else None)
        if self.volumes:
            self.cinder = CinderEnvironment(
                os.path.join(self.state_dir, 'cinder'), self.name,
                on_record=self._record_volumes, keystone=self._cinder_keystone())
            self.cinder.glance_url = self.glance.url
            self.cinder.nova_url = self.api_url
            self.cinder.check()
            # Ceph and Cinder's schema take seconds: beside everything else.
            self.cinder.launch()
        transport_url = self._make_vhost_and_databases()
        self._start_db_gate()
        if self.neutron is not None:
            # OVS/OVN and Neutron's schema take seconds too: beside Glance and Placement.
            self.neutron.start_background()
        # Glance's schema sync takes seconds: it runs while Placement starts. The process
        # is forked from this thread (it is told to stop when its forking thread ends).
        self.glance.launch()
        self._record_pid('glance', self.glance.process.pid)
        self._glance_thread = threading.Thread(target=self._start_glance, daemon=True)
        self._glance_thread.start()
        self._start_placement()
        if self.keystone is not None:
            self._start_keystone()
        self._glance_thread.join(120)
        if not self.glance_url:
            raise RuntimeError('Glance did not start; see %s' % self._glance_log())
        if self.neutron is not None:
            self.neutron.wait_started()
        if self.cinder is not None:
            self.cinder.wait_started()
        self._configure(transport_url)
        if self.before_daemons is not None:
            self.before_daemons(self)
        self._start_forwarders(transport_url)
        self._start_daemons()
        self.manage('cell_v2', 'discover_hosts')
        for flavor, vcpus, ram, disk in FLAVORS:
            self.api('POST', '/flavors', json={'flavor': {
                'name': flavor, 'vcpus': vcpus, 'ram': ram, 'disk': disk}}).raise_for_status()
        assert self.placement is not None
        if self.keystone is None:
            config.clouds_yaml(self.clouds_yaml, self.api_url, self.glance_url,
                               self.placement.url,
                               self.neutron.url if self.neutron is not None else None,
                               self.cinder.url if self.cinder is not None else None)
        else:
            config.keystone_clouds_yaml(self.clouds_yaml, self.keystone.auth_url,
                                        self.glance_url, self.placement.url)

    def _make_vhost_and_databases(self) -> str:
        """The vhost and the four databases; returns the transport URL."""
        # Recorded before made: a failure half-way still finds them at teardown.
        self.record['vhost'] = self.name
        self._save()
        transport_url = backends.create_vhost(self.name)
        for label in ('api', 'cell1', 'cell1_cell0', 'placement'):
            # simple_cell_setup derives cell0 from the cell1 URL by appending "_cell0".
            db_name = '%s_%s' % (self.name, label)
            self.record['databases'].append(db_name)
            self._save()
            self.db_urls[label] = backends.create_database(self.backend, db_name)
        self.daemon_db_urls = dict(self.db_urls)
        return transport_url

    def _start_db_gate(self) -> None:
        """With ``db_gate``: the gate in front of the database server, and the daemons'
        database URLs pointed at it."""
        if not self.db_gate:
            return
        server = make_url(self.db_urls['api'])
        port = glance_process.free_port()
        state_dir = os.path.join(self.etc_dir, DB_GATE)
        os.makedirs(state_dir, exist_ok=True)
        self._db_gate_state = os.path.join(state_dir, 'state')
        gate = process.Process(DB_GATE, [
            sys.executable, '-m', 'tests.devstack.harness.dbgate', '--state-file',
            self._db_gate_state, str(port), server.host or '127.0.0.1',
            str(server.port or DEFAULT_PORTS[server.get_backend_name()])],
            os.path.join(self.log_dir, DB_GATE + '.log'), env=_harness_env())
        self.daemons[DB_GATE] = gate
        gate.start()
        assert gate.pid is not None
        self._record_pid(DB_GATE, gate.pid)
        self._wait_db_gate(dbgate.OPEN)
        self.daemon_db_urls = {
            label: make_url(url).set(host='127.0.0.1', port=port).render_as_string(
                hide_password=False) for label, url in self.db_urls.items()}

    def _start_placement(self) -> None:
        urls = self.daemon_db_urls if self.db_gate_placement else self.db_urls
        self.placement = PlacementProcess(self.state_dir, urls['placement'],
                                          glance_process.free_port(), self.bin_dir,
                                          os.path.join(self.log_dir, 'placement.log'),
                                          *self.placement_gunicorn,
                                          isolation=self.placement_isolation)
        self.placement.setup()
        self.placement.start()
        self._record_pid('placement', self.placement.process.pid)

    def _start_keystone(self) -> None:
        """Keystone, bootstrapped, with the users of ``keystone.USERS`` and the catalog
        (the Compute API; Neutron when there is one); a daemon of the stack, so that
        teardown stops it with the others."""
        assert self.keystone is not None
        self.keystone.setup()
        self.daemons['keystone'] = self.keystone.process
        self.keystone.start()
        self._record_pid('keystone', self.keystone.process.pid)
        self.keystone.create_identities()
        self.keystone.register_service('compute', 'nova', self.api_url + '/v2.1')
        if self.neutron is not None:
            self.keystone.register_service('network', 'neutron', self.neutron.url)
        if self.cinder is not None:
            # As devstack registers Cinder: ``volumev3`` with the project in the path
            # (Nova's [cinder] catalog_info names it), ``block-storage`` without (what
            # openstackclient looks for first).
            self.keystone.register_service('volumev3', 'cinderv3',
                                           self.cinder.url + '/v3/%(project_id)s')
            self.keystone.register_service('block-storage', 'cinder',
                                           self.cinder.url + '/v3')
        self._identities.set()

    def _neutron_keystone(self) -> KeystoneAuth | None:
        """How Neutron meets the stack's Keystone (None without one): its own service
        user ``neutron``; ``nova`` for its events and for the daemons' calls."""
        if self.keystone is None:
            return None
        return KeystoneAuth(authtoken=self.keystone.authtoken_conf('neutron'),
                            nova=self.keystone.password_conf('nova'),
                            client=self.keystone.password_conf('nova'),
                            token=self._keystone_admin_token)

    def _cinder_keystone(self) -> KeystoneAuth | None:
        """How Cinder meets the stack's Keystone (None without one): its own service
        user ``cinder``; ``nova`` for its calls to the compute API and for the daemons'
        calls (with the ``service`` role, as ``[service_user]``)."""
        if self.keystone is None:
            return None
        return KeystoneAuth(authtoken=self.keystone.authtoken_conf('cinder'),
                            nova=self.keystone.password_conf('nova'),
                            client=self.keystone.password_conf('nova'),
                            token=self._keystone_admin_token)

    def _keystone_admin_token(self) -> str | None:
        """The Keystone admin's token once the stack's identities exist, else None."""
        if self.keystone is None or not self._identities.is_set():
            return None
        return self.keystone.token('admin')

    def _configure(self, transport_url: str) -> None:
        """Each daemon's config file, then the schemas and cells (novalite-manage)."""
        assert self.placement is not None
        base = config.base_conf(transport_url, self.daemon_db_urls['api'],
                                self.daemon_db_urls['cell1'],
                                self.api_port, self.placement.url, self.glance_url)
        if self.neutron is not None:
            base = config.merge(base, self.neutron.daemon_conf())
        if self.cinder is not None:
            base = config.merge(base, self.cinder.daemon_conf())
        if self.consoles:
            self.console_ports = {name: glance_process.free_port() for name in CONSOLE_PROXIES}
            base = config.merge(base, config.console_conf(*(
                self.console_ports[name] for name in CONSOLE_PROXIES)))
        if self.keystone is not None:
            # [glance]: the service user for calls on behalf of no user (user calls carry
            # the user's token).
            base = config.merge(base, {'api': {'auth_strategy': 'keystone'},
                                       'keystone_authtoken': self.keystone.authtoken_conf(),
                                       'glance': self.keystone.password_conf('nova')})
        for name in ('api', *CONTROLLER_DAEMONS, *self._proxy_names()):
            self._write_daemon_conf(name, base)
        for name in self._compute_names():
            self._write_daemon_conf(name, config.merge(base, self._switch_conf(name)))
        for args in (('api_db', 'sync'), ('db', 'sync'), ('cell_v2', 'simple_cell_setup')):
            self.manage(*args)

    def _start_daemons(self) -> None:
        """Start every daemon at once, as systemd starts the units; return when each
        service heartbeats, the API answers and the computes have reported their nodes.

        The daemons are correct in any order: a compute waits for a conductor to answer
        before its first object call, and a service heartbeats only once its RPC server
        has declared its queue (a message sent to it from then on waits there).
        """
        # Created API first, conductor last: the order in which stopping them one by
        # one leaves no daemon waiting on one already gone.
        names = ('api', *self._proxy_names(), *self._compute_names(),
                 *reversed(CONTROLLER_DAEMONS))
        for name in names:
            argv = process.unit_command(self._unit(name), self.bin_dir, self.conf_file(name))
            for path in self.config_files:
                argv += ['--config-file', path]
            netns = self.compute_netns(name)
            self.daemons[name] = process.Process(
                name, argv if netns is None else ['ip', 'netns', 'exec', netns, *argv],
                os.path.join(self.log_dir, name + '.stdout'))
        services = [name for name in names if name != 'api' and name not in CONSOLE_PROXIES]
        before = self._report_counts()
        for name in names:
            self.start(name, wait=False)

        def ready() -> bool:
            for name in names:
                daemon = self.daemons[name]
                if not daemon.running():
                    raise RuntimeError('%s exited (%s):\n%s' % (
                        os.path.basename(daemon.argv[0]), name, daemon.tail()))
            counts = self._report_counts()
            if any(counts.get(self._service_key(name), -1)
                   <= before.get(self._service_key(name), -1) for name in services):
                return False
            if not all(self._proxy_listens(name) for name in self._proxy_names()):
                return False
            return set(self.compute_nodes()) >= set(self.computes) and self._api_answers()
        self.wait_for(ready, 90, 'the daemons (heartbeats, compute nodes, the Compute API)',
                      0.1)

    def _switch_conf(self, name: str) -> config.Sections:
        """A compute's os-vif plugs into its host's switch (none without a network)."""
        if self.neutron is None:
            return {}
        chassis = self.neutron.chassis(name[len('compute-'):])
        return {'os_vif_ovs': {'ovsdb_connection': chassis.ovsdb_connection}}

    def compute_netns(self, name: str) -> str | None:
        """The network namespace daemon ``name`` runs in; None for the root one."""
        if not (self.netns_computes and self.neutron is not None
                and name.startswith('compute-')):
            return None
        return self.neutron.chassis(name[len('compute-'):]).netns

    def _service_ports(self, transport_url: str) -> list[int]:
        """The ports on 127.0.0.1 of what the daemons use."""
        assert self.placement is not None
        urls = [transport_url, *self.daemon_db_urls.values(), self.placement.url,
                self.glance_url, self.api_url]
        if self.neutron is not None:
            urls.append(self.neutron.url)
        if self.cinder is not None:
            urls.append(self.cinder.url)
        if self.keystone is not None:
            urls.append(self.keystone.url)
        ports = set()
        for url in urls:
            parts = urlsplit(url)
            if parts.hostname in LOOPBACK_NAMES:
                ports.add(parts.port or DEFAULT_PORTS[parts.scheme.split('+')[0]])
        return sorted(ports)

    def _start_forwarders(self, transport_url: str) -> None:
        """A forwarder of the services' ports into each compute's namespace (daemons
        ``forward-<host>``); returns once they listen."""
        ports = [str(p) for p in self._service_ports(transport_url)]
        for name in self._compute_names():
            netns = self.compute_netns(name)
            if netns is None:
                continue
            host = name[len('compute-'):]
            ready = os.path.join(self.state_dir, 'forward-%s.ready' % host)
            if os.path.exists(ready):
                os.remove(ready)
            forwarder = process.Process(
                'forward-' + host, [sys.executable, '-m', 'tests.devstack.harness.forward',
                                    '--ready-file', ready, netns, *ports],
                os.path.join(self.log_dir, 'forward-%s.log' % host), env=_harness_env())
            self.daemons[forwarder.name] = forwarder
            forwarder.start()
            assert forwarder.pid is not None
            self._record_pid(forwarder.name, forwarder.pid)

            def listening(daemon: process.Process = forwarder, path: str = ready) -> bool:
                if not daemon.running():
                    raise RuntimeError('%s exited:\n%s' % (daemon.name, daemon.tail()))
                return os.path.exists(path)
            self.wait_for(listening, 30, 'the forwarder into %s' % netns, 0.05)

    def _start_glance(self) -> None:
        try:
            url = self.glance.wait_ready()
            token = glance_process.ADMIN_TOKEN
            if self.keystone is not None:
                # Glance asks Keystone who the uploader is: once the admin can log in.
                if not self._identities.wait(180):
                    raise RuntimeError('Keystone had no identities after 180 s')
                token = self.keystone.token('admin')
            self.image_id = self.glance.create_image(IMAGE_NAME, IMAGE_DATA, token=token)
            self.glance_url = url
        except Exception as exc:  # reported by _up, which waits for this thread
            with open(self._glance_log(), 'a') as log:
                log.write('devstack harness: %r\n' % exc)

    def _glance_log(self) -> str:
        return os.path.join(self.log_dir, 'glance-start.log')

    def _compute_names(self) -> list[str]:
        return ['compute-' + host for host in self.computes]

    def _proxy_names(self) -> tuple[str, ...]:
        return CONSOLE_PROXIES if self.consoles else ()

    @property
    def novncproxy_url(self) -> str:
        """The noVNC page behind the console URLs ('' without ``consoles``)."""
        port = self.console_ports.get('novncproxy')
        return 'http://127.0.0.1:%d/vnc_lite.html' % port if port else ''

    @property
    def serialproxy_url(self) -> str:
        """The serial proxy's websocket ('' without ``consoles``)."""
        port = self.console_ports.get('serialproxy')
        return 'ws://127.0.0.1:%d/' % port if port else ''

    def _proxy_listens(self, name: str) -> bool:
        try:
            socket.create_connection(('127.0.0.1', self.console_ports[name]), 2).close()
        except OSError:
            return False
        return True

    def _unit(self, name: str) -> str:
        binary = 'compute' if name.startswith('compute-') else name
        return os.path.join(UNIT_DIR, 'novalite-%s.service' % binary)

    def conf_file(self, name: str) -> str:
        return os.path.join(self.etc_dir, name, 'novalite.conf')

    def _write_daemon_conf(self, name: str, base: config.Sections) -> None:
        own: config.Sections = {'DEFAULT': {
            'host': name[len('compute-'):] if name.startswith('compute-') else 'controller',
            'state_path': os.path.join(self.state_dir, 'lib', name),
            'log_file': os.path.join(self.log_dir, name + '.log')}}
        os.makedirs(os.path.dirname(self.conf_file(name)), exist_ok=True)
        os.makedirs(own['DEFAULT']['state_path'], exist_ok=True)
        config.write_conf(self.conf_file(name), config.merge(
            base, own, self.extra_conf, self.host_conf.get(name)))

    def reconfigure(self, name: str, sections: config.Sections) -> None:
        """Merge options into one daemon's config file (restart it to apply them)."""
        parser = configparser.RawConfigParser(strict=False)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(self.conf_file(name))
        current: config.Sections = {'DEFAULT': dict(parser.defaults())}
        for section in parser.sections():
            current[section] = {k: v for k, v in parser.items(section, raw=True)
                                if k not in parser.defaults()}
        config.write_conf(self.conf_file(name), config.merge(current, sections))

    def _save(self) -> None:
        # Glance starts on a thread of its own, which records its pid too.
        with self._record_lock:
            tmp = self.record_file + '.tmp'
            with open(tmp, 'w') as out:
                json.dump(self.record, out, indent=1)
            os.replace(tmp, self.record_file)

    def _record_pid(self, name: str, pid: int) -> None:
        with self._record_lock:
            self.record['pids'][name] = pid
        self._save()

    def _record_network(self, record: NetworkRecord) -> None:
        with self._record_lock:
            self.record['network'] = record
        self._save()

    def _record_volumes(self, record: VolumeRecord) -> None:
        with self._record_lock:
            self.record['volumes'] = record
        self._save()

    # -- tools ---------------------------------------------------------------------------

    def manage(self, *args: str, conf_file: str | None = None,
               check: bool = True) -> subprocess.CompletedProcess:
        cmd = [os.path.join(self.bin_dir, 'novalite-manage'), '--config-file',
               conf_file or self.conf_file('conductor'), *args]
        result = subprocess.run(cmd, capture_output=True, text=True, env=process.child_env(),
                                timeout=300)
        if check and result.returncode != 0:
            raise RuntimeError('%s failed (%s):\n%s%s' % (' '.join(cmd), result.returncode,
                                                       result.stdout, result.stderr))
        return result

    def api(self, method: str, path: str, microversion: str = 'latest',
            **kwargs: Any) -> requests.Response:
        """A request to the Compute API as admin (noauth2 token ``admin:admin``, or the
        Keystone admin's token)."""
        token = self.keystone.token('admin') if self.keystone is not None else TOKEN
        headers = {'X-Auth-Token': token, 'OpenStack-API-Version': 'compute ' + microversion,
                   **kwargs.pop('headers', {})}
        return requests.request(method, self.api_url + '/v2.1' + path, headers=headers,
                                timeout=kwargs.pop('timeout', 60), **kwargs)

    def wait_api(self, timeout: float = 60.0) -> None:
        def answers() -> bool:
            api = self.daemons['api']
            if not api.running():
                raise RuntimeError('novalite-api exited:\n%s' % api.tail())
            return self._api_answers()
        self.wait_for(answers, timeout, 'the Compute API on %s' % self.api_url)

    def _api_answers(self) -> bool:
        try:
            return requests.get(self.api_url + '/', timeout=10).status_code == 200
        except requests.RequestException:
            return False

    @staticmethod
    def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError('timed out after %ss waiting for %s' % (timeout, what))
            time.sleep(interval)

    def query(self, db: str, sql: str, **params: Any) -> list[sa.Row]:
        """Rows of a query on the ``api``, ``cell1``, ``cell1_cell0`` or ``placement`` DB."""
        engine = self._engines.get(db)
        if engine is None:
            # One engine per database (its dialect set up once); no pool: nothing stays
            # connected to a database that teardown drops.
            engine = self._engines.setdefault(db, sa.create_engine(
                self.db_urls[db], poolclass=sa.pool.NullPool))
        with engine.connect() as conn:
            return list(conn.execute(sa.text(sql), params))

    def compute_nodes(self) -> list[str]:
        return [r.host for r in self.query(
            'cell1', 'SELECT host FROM compute_nodes WHERE deleted = 0')]

    def report_count(self, host: str, binary: str = 'novalite-compute') -> int:
        """Heartbeats of a service so far; -1 when it has no record."""
        return self._report_counts().get((host, binary), -1)

    def _report_counts(self) -> dict[tuple[str, str], int]:
        """Heartbeats so far of every service, by (host, binary)."""
        # "binary" is a keyword that MariaDB and PostgreSQL quote differently: no filter.
        rows = self.query('cell1', 'SELECT * FROM services WHERE deleted = 0')
        return {(r.host, r.binary): r.report_count for r in rows}

    # -- faults --------------------------------------------------------------------------

    def daemon(self, name: str) -> process.Process:
        return self.daemons[name]

    def kill(self, name: str) -> None:
        """kill -9 one daemon (``compute-hostA``, ``conductor``, ...)."""
        self.daemons[name].kill()

    def stop(self, name: str, timeout: float = 30.0) -> int | None:
        """SIGTERM one daemon and wait for it to exit; returns its exit code."""
        return self.daemons[name].stop(timeout)

    def _service_key(self, name: str) -> tuple[str, str]:
        if name.startswith('compute-'):
            return name[len('compute-'):], 'novalite-compute'
        return 'controller', 'novalite-' + name

    def start(self, name: str, wait: bool = True) -> None:
        """Start a stopped daemon with the same command line; wait for its heartbeat."""
        before = -1 if name in ('api', *CONSOLE_PROXIES) or not wait else self.report_count(
            *self._service_key(name))
        daemon = self.daemons[name]
        daemon.start()
        self._record_pid(name, daemon.pid)
        if wait:
            self.wait_up(name, before)

    def wait_up(self, name: str, before: int = -1, timeout: float = 60.0) -> None:
        """Wait until the API answers, or a service's report count passes ``before``."""
        if name == 'api':
            self.wait_api(timeout)
            return
        daemon = self.daemons[name]
        if name in CONSOLE_PROXIES:
            def listening() -> bool:
                if not daemon.running():
                    raise RuntimeError('%s exited:\n%s' % (name, daemon.tail()))
                return self._proxy_listens(name)
            self.wait_for(listening, timeout, '%s listening' % name, 0.05)
            return

        def beating() -> bool:
            if not daemon.running():
                raise RuntimeError('%s exited:\n%s' % (name, daemon.tail()))
            return self.report_count(*self._service_key(name)) > before
        self.wait_for(beating, timeout, 'a heartbeat of %s' % name)

    def restart(self, name: str) -> None:
        self.stop(name)
        self.start(name)

    def crash(self, name: str, wait: bool = True) -> float:
        """kill -9 a daemon, then start it again as its systemd unit would: after the
        unit's ``RestartSec`` (the units say ``Restart=on-failure``, and a SIGKILL is a
        failure). Returns that delay.

        :param wait: return once the restarted daemon heartbeats (else once started)
        """
        delay = process.unit_restart_delay(self._unit(name))
        before = self.report_count(*self._service_key(name))
        self.kill(name)
        time.sleep(delay)
        self.start(name, wait=False)
        if wait:
            self.wait_up(name, before)
        return delay

    def stop_placement(self) -> None:
        assert self.placement is not None
        self.placement.stop()

    def start_placement(self) -> None:
        assert self.placement is not None
        self.placement.start()
        self._record_pid('placement', self.placement.process.pid)

    def close_database(self) -> None:
        """A database outage (needs ``db_gate``): new connections of the daemons to
        the database server are refused and their open ones reset, until
        ``open_database``; returns once in effect."""
        self._signal_db_gate(signal.SIGUSR1, dbgate.CLOSED)

    def open_database(self) -> None:
        """End the outage ``close_database`` began; returns once connections pass."""
        self._signal_db_gate(signal.SIGUSR2, dbgate.OPEN)

    def _signal_db_gate(self, sig: int, state: str) -> None:
        if not self.db_gate:
            raise RuntimeError('the stack has no database gate (Stack(db_gate=True))')
        gate = self.daemons[DB_GATE]
        if not gate.running():
            raise RuntimeError('the database gate exited:\n%s' % gate.tail())
        # A stale state (the same as wanted) must not be taken for the change.
        os.remove(self._db_gate_state)
        gate.signal(sig)
        self._wait_db_gate(state)

    def _wait_db_gate(self, state: str) -> None:
        gate = self.daemons[DB_GATE]

        def in_effect() -> bool:
            if not gate.running():
                raise RuntimeError('the database gate exited:\n%s' % gate.tail())
            try:
                with open(self._db_gate_state) as current:
                    return current.read().split()[0] == state
            except (OSError, IndexError):
                return False
        self.wait_for(in_effect, 30, 'the database gate to be %s' % state, 0.02)

    def close_bus_connections(self) -> None:
        """Drop every RabbitMQ connection of this stack's vhost."""
        backends.close_connections(self.name)

    # -- teardown ------------------------------------------------------------------------

    def down(self, check: bool = True) -> list[str]:
        """Stop every process, drop the databases, delete the vhost.

        :returns: what is still left behind (empty when all went)
        :raises RuntimeError: ``check`` and something is left behind
        """
        started = time.monotonic()
        if self._glance_thread is not None:
            # A start-up that failed early must not leave a Glance starting behind it.
            self._glance_thread.join(120)
        errors = self._stop_proxies()
        errors += teardown(self.record, self.state_dir, self.daemons, self.placement,
                           self.glance, self.neutron, self.cinder)
        self.daemons = {}
        left = errors + leftovers(self.record, self.state_dir)
        self.timings['down'] = time.monotonic() - started
        if check and left:
            raise RuntimeError('the stack left things behind: %s' % '; '.join(left))
        return left


    def _stop_proxies(self) -> list[str]:
        """SIGTERM the console proxies, which must end as systemd expects (exit 0, their
        connections' processes with them); returns what went wrong."""
        errors = []
        # Those a test stopped or killed are not asked again.
        proxies = [self.daemons[name] for name in CONSOLE_PROXIES
                   if name in self.daemons and self.daemons[name].running()]
        for proxy in proxies:
            proxy.signal(signal.SIGTERM)
        for proxy in proxies:
            code = proxy.stop()
            if code != 0:
                errors.append('%s exited %s at its stop:\n%s' % (proxy.name, code,
                                                                proxy.tail()))
        return errors


def _harness_env() -> dict[str, str]:
    """The environment of a helper the harness runs as ``python -m tests.devstack.harness.X``
    (the database gate, the port forwarders): this checkout on the path, from any folder."""
    return process.child_env(PYTHONPATH=REPO_ROOT)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=10).status_code < 500
    except requests.RequestException:
        return False
