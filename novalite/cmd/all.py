"""novalite-all: a complete cloud in one process, for trying novalite and for CI of tools.

API, conductor, scheduler and computes (fake driver) in this process over the in-process
transport, on SQLite files under ``--state-dir``; the real Placement in-process; the
real Glance as a child process; unless ``--no-network``, the real Neutron (ML2/OVN, an
OVN chassis per compute host, ``novalite.allinone.network``) with a network ``private``;
with ``--volumes``, the real Cinder on a one-node Ceph (``novalite.allinone.cinder``);
the noVNC and serial console proxies as threads (``novalite.allinone.consoles``).
Glance, Neutron and Cinder start in parallel with the rest. Runs in the foreground until SIGINT
or SIGTERM, then stops everything, Glance and Neutron included.

Neutron needs root, Open vSwitch and OVN, ``.venv-neutron`` and MariaDB; when it cannot
start, novalite-all says why and exits (1) rather than run a cloud without networks that
the user did not ask for: ``--no-network`` is that cloud. Likewise ``--volumes`` needs
Ceph's packages, ``.venv-cinder``, MariaDB and RabbitMQ.
"""
from __future__ import annotations

import argparse
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import requests
from oslo_log import log as logging

from novalite import metrics, reports
from novalite.allinone import cinder, cloud, network
from novalite.allinone.cinder import AllInOneCinder
from novalite.allinone.consoles import Consoles
from novalite.allinone.glance import GlanceProcess
from novalite.allinone.network import AllInOneNeutron
from novalite.conf import CONF

if TYPE_CHECKING:
    import types
    from typing import TextIO

    from novalite.allinone.stack import Stack

LOG = logging.getLogger(__name__)
BINARY = 'novalite-all'
READY = 'novalite-all ready'


class _Stop(BaseException):
    """A SIGINT/SIGTERM arrived (BaseException: no ``except Exception`` swallows it)."""


class _Signals:
    """Records SIGINT/SIGTERM; ``check()`` raises ``_Stop`` once one has arrived.

    The handler itself never raises while we start: an exception thrown into arbitrary
    code (a database transaction, a lock) could leave it half done. Starting checks
    between its steps instead; only the final wait, which holds nothing, is interrupted.
    """

    def __init__(self) -> None:
        self.received: str | None = None
        self.interrupt = False

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: types.FrameType | None) -> None:
        if self.received is None:
            self.received = signal.Signals(signum).name
            if self.interrupt:
                self.interrupt = False
                raise _Stop(self.received)

    def check(self) -> None:
        if self.received is not None:
            raise _Stop(self.received)

    def wait(self) -> None:
        """Block until a signal arrives."""
        self.interrupt = True
        self.check()
        while True:
            signal.pause()


class _Background(threading.Thread):
    """Runs ``fn`` on a thread; ``result()`` joins and returns or re-raises."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self._fn = fn
        self._result: Any = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._result = self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self._error = exc

    def result(self) -> Any:
        self.join()
        if self._error is not None:
            raise self._error
        return self._result


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='novalite-all', description='Run a complete novalite cloud in one process '
        '(with Glance as a child process) until SIGINT or SIGTERM.')
    parser.add_argument('--state-dir', required=True, metavar='DIR',
                        help='Databases, images, logs and clouds.yaml; reused on restart.')
    parser.add_argument('--port', type=int, default=8774, metavar='N',
                        help='Port of the Compute API on 127.0.0.1 (default: 8774).')
    parser.add_argument('--computes', type=int, default=1, metavar='N',
                        help='Number of compute hosts (fake driver), named compute1.. '
                             '(default: 1).')
    parser.add_argument('--no-network', dest='network', action='store_false',
                        help='Run without Neutron: servers boot with no network.')
    parser.add_argument('--config-file', dest='config_files', action='append', default=[],
                        metavar='FILE',
                        help='A novalite.conf file for every service (repeatable; later '
                             'files win), e.g. [DEFAULT] reclaim_instance_interval to try '
                             "soft delete. novalite-all's own settings (databases, "
                             'transport, auth, endpoints) win over it.')
    parser.add_argument('--neutron-db-server', default=network.DB_SERVER, metavar='URL',
                        help='The MariaDB server that keeps Neutron\'s database, as an '
                             'SQLAlchemy URL (default: %(default)s).')
    parser.add_argument('--volumes', action='store_true',
                        help='Also run the real Cinder (RBD on a one-node Ceph made anew at '
                             'each start: volumes do not outlive a stop); needs Ceph '
                             '(tools/setup.sh), MariaDB and RabbitMQ.')
    parser.add_argument('--cinder-db-server', default=network.DB_SERVER, metavar='URL',
                        help='With --volumes: the MariaDB server of Cinder\'s database, as '
                             'an SQLAlchemy URL (default: %(default)s).')
    parser.add_argument('--rabbit-url', default=cinder.RABBIT_URL, metavar='URL',
                        help='With --volumes: the RabbitMQ broker Cinder\'s services talk '
                             'over, in a vhost of their own (default: %(default)s).')
    args = parser.parse_args(argv)
    if args.computes < 1:
        parser.error('--computes must be at least 1')
    for path in args.config_files:
        if not os.path.isfile(path):
            parser.error('--config-file %s: no such file' % path)
    return args


def _process_age() -> float:
    """Seconds since this process started (interpreter start-up and imports included),
    from /proc; 0 where there is none."""
    try:
        with open('/proc/self/stat') as stat:
            start_ticks = int(stat.read().rsplit(')', 1)[1].split()[19])
        with open('/proc/uptime') as uptime:
            return float(uptime.read().split()[0]) - start_ticks / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return 0.0


def _setup_logging(state_dir: str) -> str:
    log_file = os.path.join(state_dir, 'novalite-all.log')
    CONF.set_override('log_file', log_file)
    logging.setup(CONF, 'novalite')
    return log_file


def _wait_until_answers(url: str, timeout: float = 60.0) -> None:
    """Until ``url`` answers 2xx: a refused connection or a slow answer is retried."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(url, timeout=5).ok:
                return
        except (requests.ConnectionError, requests.Timeout):
            if time.monotonic() > deadline:
                raise
        time.sleep(0.02)


def _port_is_free(port: int) -> bool:
    """Checked before anything starts; the API binds the port for real later."""
    with socket.socket() as sock:
        # As the API server binds: connections of a previous run in TIME_WAIT are fine.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return False
    return True


def _start_glance(glance: GlanceProcess, started: float) -> str:
    glance.wait_ready()
    image_id = glance.create_image(cloud.IMAGE_NAME, cloud.IMAGE_DATA)
    LOG.info('Glance up with image %s after %.2f s', image_id, time.monotonic() - started)
    return image_id


def _start_network(args: argparse.Namespace, state_dir: str,
                   hosts: tuple[str, ...]) -> AllInOneNeutron | None:
    """Neutron, checked here and started on a thread of its own; ``None`` if it cannot
    run here (said why on stderr)."""
    neutron = AllInOneNeutron(os.path.join(state_dir, 'neutron'), hosts,
                              'http://127.0.0.1:%d' % args.port,
                              db_server=args.neutron_db_server)
    try:
        neutron.check()
    except RuntimeError as exc:
        neutron.ovn.release()
        _say('novalite-all: Neutron cannot run here: %s\n(novalite-all --no-network runs '
             'the cloud without networks)' % exc, sys.stderr)
        return None
    if neutron.removed:
        _say('novalite-all: an earlier novalite-all of this state folder was killed; '
             'removed what it left running: %s' % ', '.join(neutron.removed), sys.stderr)
    neutron.start_background()
    return neutron


def _start_volumes(args: argparse.Namespace, state_dir: str,
                   glance_url: str) -> AllInOneCinder | None:
    """Ceph and Cinder, checked here and started on a thread of their own; ``None`` if
    they cannot run here (said why on stderr)."""
    volumes = AllInOneCinder(os.path.join(state_dir, 'cinder'), args.cinder_db_server,
                             rabbit_url=args.rabbit_url)
    volumes.glance_url = glance_url
    # Cinder's volume-reimaged event reaches novalite keystone-less at this URL.
    volumes.nova_url = 'http://127.0.0.1:%d' % args.port
    try:
        volumes.check()
    except RuntimeError as exc:
        _say('novalite-all: %s\n(novalite-all without --volumes runs the cloud without '
             'volumes)' % exc, sys.stderr)
        return None
    if volumes.removed:
        _say('novalite-all: an earlier novalite-all of this state folder was killed; '
             'removed what its Cinder left running: %s' % ', '.join(volumes.removed),
             sys.stderr)
    volumes.launch()
    return volumes


def _wait_volumes(volumes: AllInOneCinder, signals: _Signals, started: float) -> None:
    try:
        volumes.wait_started(meanwhile=signals.check)
    except Exception as exc:
        raise RuntimeError('Cinder did not start: %s' % exc) from exc
    LOG.info('Cinder up after %.2f s (%s; Ceph %s)', time.monotonic() - started,
             ', '.join('%s %.2f s' % item for item in volumes.timings.items()),
             ', '.join('%s %.2f s' % item for item in volumes.ceph.timings.items()))


def _wait_network(neutron: AllInOneNeutron, signals: _Signals, started: float) -> None:
    """Neutron up, and the network ``private``."""
    try:
        neutron.wait_started(meanwhile=signals.check)
        network.ensure_default_network(neutron)
    except Exception as exc:
        raise RuntimeError('Neutron did not start: %s' % exc) from exc
    LOG.info('Neutron up after %.2f s (schema %s; %s)', time.monotonic() - started,
             neutron.schema, ', '.join('%s %.2f s' % item for item in neutron.timings.items()))


def _usage(stack: Stack, glance: GlanceProcess, neutron: AllInOneNeutron | None,
           volumes: AllInOneCinder | None, consoles: Consoles, clouds_yaml: str,
           log_file: str, seconds: float) -> str:
    pid = glance.process.pid if glance.process else '?'
    lines = [
        'novalite-all: a cloud in %s (started in %.1f s)' % (stack.state_dir, seconds),
        '  Compute API  %s  (noauth2: token user:project; user admin is admin)' % stack.api,
        '  Placement    %s' % stack.placement.url,
        '  Glance       %s  (pid %s)' % (glance.url, pid),
    ]
    if neutron is not None:
        lines += [
            '  Neutron      %s  (ML2/OVN, noauth; network %s, %s)' % (
                neutron.url, network.NETWORK, network.CIDR),
            '  Neutron DB   %s on %s  (kept across restarts)' % (
                neutron.database_name(), neutron.db_server),
        ]
    if volumes is not None:
        lines += [
            '  Cinder       %s  (RBD on Ceph, noauth; volumes go with each stop)'
            % volumes.url,
            '  Ceph         %s  (mon %s)' % (volumes.ceph.dir, volumes.ceph.mon_host),
        ]
    lines += [
        '  noVNC proxy  %s%s' % (consoles.novnc_url, '' if consoles.web else
                                 '  (websocket only: no noVNC in %s)' % CONF.web),
        '  Serial proxy %s%s' % (consoles.serial_url, '' if CONF.serial_console.enabled
                                 else '  ([serial_console] enabled is false)'),
        '  Computes     %s  (fake driver%s)' % (', '.join(stack.compute_hosts),
                                                '; an OVN chassis each' if neutron else ''),
        '  Image        %s;  flavors %s' % (cloud.IMAGE_NAME,
                                            ', '.join(f[0] for f in cloud.FLAVORS)),
        '  Log          %s' % log_file,
    ]
    if stack.config_files:
        lines.append('  Config       %s' % ', '.join(stack.config_files))
    lines += [
        'Use it:',
        '  export OS_CLIENT_CONFIG_FILE=%s' % clouds_yaml,
        '  openstack --os-cloud %s server create --image %s --flavor m1.nano %s '
        '--wait vm1' % (cloud.CLOUD_NAME, cloud.IMAGE_NAME,
                        '--network ' + network.NETWORK if neutron else '--nic none'),
    ]
    lines.append('  openstack --os-cloud %s console url show --novnc vm1   (or --serial)'
                 % cloud.CLOUD_NAME)
    if volumes is not None:
        lines.append('  openstack --os-cloud %s volume create --size 1 vol1' % cloud.CLOUD_NAME)
    lines.append('Stop it with Ctrl-C or SIGTERM.')
    return '\n'.join(lines)


def run(args: argparse.Namespace, signals: _Signals) -> int:
    started = time.monotonic() - _process_age()
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    if not _port_is_free(args.port):
        _say('novalite-all: port %d is in use: choose another with --port' % args.port,
             sys.stderr)
        return 1
    hosts = tuple('compute%d' % i for i in range(1, args.computes + 1))
    # Neutron (4-5 s, 12-19 s the first time) and Glance (1.5-3 s) are the slowest parts:
    # they start first and come up while the rest of novalite is imported and started.
    neutron = None
    if args.network:
        neutron = _start_network(args, state_dir, hosts)
        if neutron is None:
            return 1
    glance = GlanceProcess(os.path.join(state_dir, 'glance'))
    volumes = None
    if args.volumes:
        volumes = _start_volumes(args, state_dir, glance.url)
        if volumes is None:
            if neutron is not None:
                _report_leftovers(neutron.stop())
            return 1
    # Forked from the main thread: Glance is told to stop when its forking thread ends.
    glance.launch()
    glance_start = _Background(lambda: _start_glance(glance, started))
    glance_start.start()
    stack = None
    consoles = Consoles()
    try:
        from novalite.allinone.stack import Settings, Stack  # about a second of imports
        overrides: Settings = {('neutron', 'endpoint_override'): neutron.url} if neutron else {}
        if volumes is not None:
            overrides.update({(group, name): value
                              for group, options in volumes.daemon_conf().items()
                              for name, value in options.items()})
        stack = Stack(state_dir, glance.url, api_port=args.port, compute_hosts=hosts,
                      overrides=overrides, config_files=tuple(args.config_files))
        # The fake driver serves every guest a serial console: on unless a config file
        # turns it off (a default, which the files win over).
        CONF.set_default('enabled', True, group='serial_console')
        stack.configure()
        log_file = _setup_logging(state_dir)
        reports.setup_autorun(BINARY, CONF)
        metrics.start_exporter(BINARY)
        signals.check()
        consoles.start()
        stack.start()
        api_server, placement_url = stack.api_server, stack.placement.url
        assert api_server is not None and placement_url is not None  # start() set both
        LOG.info('Services up after %.2f s', time.monotonic() - started)
        signals.check()
        cloud.ensure_flavors()
        _wait_until_answers(api_server.url + '/')
        glance_start.result()
        signals.check()
        if neutron is not None:
            _wait_network(neutron, signals, started)
            signals.check()
        if volumes is not None:
            _wait_volumes(volumes, signals, started)
            signals.check()
        clouds_yaml = os.path.join(state_dir, 'clouds.yaml')
        cloud.write_clouds_yaml(clouds_yaml, cloud.clouds_config(
            stack.api, glance.url, placement_url,
            neutron.url if neutron is not None else None,
            volumes.url if volumes is not None else None))
        print(_usage(stack, glance, neutron, volumes, consoles, clouds_yaml, log_file,
                     time.monotonic() - started))
        print(READY, flush=True)
        LOG.info('%s in %.2f s', READY, time.monotonic() - started)
        signals.wait()
    except _Stop as stop:
        _say('novalite-all: %s received, stopping' % stop)
    except Exception as exc:
        LOG.exception('novalite-all failed')
        reason: object = exc
        if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
            reason = 'port %d is in use: choose another with --port' % args.port
        _say('novalite-all: %s' % reason, sys.stderr)
        return 1
    finally:
        # Glance and Neutron stop while our services do (each takes about a second).
        def stop_glance() -> None:
            glance_start.join()
            glance.stop()

        glance_stop = _Background(stop_glance)
        glance_stop.start()
        neutron_stop = _Background(neutron.stop if neutron is not None else list)
        neutron_stop.start()
        volumes_stop = _Background(volumes.stop if volumes is not None else list)
        volumes_stop.start()
        # The proxies first: their open consoles relay over the stack's bus.
        consoles.stop()
        if stack is not None:
            stack.stop()
        glance_stop.result()
        _report_leftovers(neutron_stop.result())
        _report_leftovers(volumes_stop.result(), 'Cinder and Ceph')
    return 0


def _report_leftovers(errors: list[str], what: str = 'Neutron') -> None:
    if errors:
        _say('novalite-all: %s did not stop cleanly: %s' % (what, '; '.join(errors)),
             sys.stderr)


def _say(text: str, stream: TextIO | None = None) -> None:
    """Print, even when whoever read our output has gone (a closed pipe)."""
    try:
        print(text, file=stream or sys.stdout, flush=True)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> None:
    signals = _Signals()
    signals.install()
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    logging.register_options(CONF)
    sys.exit(run(args, signals))
