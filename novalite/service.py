"""A running daemon: an RPC server for its topic, a heartbeat, and periodic tasks.

``launch()`` runs services in the daemons: a one-worker daemon of the threading backend
in its own process (``OneProcessLauncher``), several workers under oslo.service's
launcher. SIGTERM stops taking messages, lets those in progress finish (at most
``[DEFAULT] graceful_shutdown_timeout`` seconds) and exits 0; SIGHUP re-reads the
mutable options of the config files (log levels) and the policy file without
restarting the RPC server. Tests and novalite-all call ``start()``/``stop()`` directly,
several services in one process.

Daemons may start in any order: a compute waits for a conductor to answer before its
first object call, and every service reports its first heartbeat only once its RPC
server has declared its queue.
"""
from __future__ import annotations

import gc
import logging as std_logging
import os
import queue
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import concurrency, exception, executor, objects, rpc
from novalite import context as nl_context
from novalite.conf import CONF
from novalite.objects import base as obj_base

if TYPE_CHECKING:
    from oslo_service.backend._threading.service import ServiceWrapper

    from novalite.conductor.rpcapi import ConductorAPI
    from novalite.manager import Manager

LOG = logging.getLogger(__name__)

P = ParamSpec('P')
R = TypeVar('R')

IDLE_POLL_MAX = 0.25
# How long stop() waits for a heartbeat or periodic run in progress.
LOOP_JOIN_TIMEOUT = 10.0


def _bound_idle_poll() -> None:
    """Make an idle AMQP listener poll at most every ``IDLE_POLL_MAX`` seconds.

    Stopping an RPC server waits for the listener's poll in progress, which on an idle
    bus grows to oslo.messaging's 5 s: an idle daemon took up to 5 s to exit on
    SIGTERM. Four wake-ups a second while idle cost nothing. Only once the rabbit
    driver is loaded: it derives an option's bound from the constant at import.
    The constant is oslo.messaging's internal, pinned by tests/unit/test_service_pins.py.
    """
    if 'oslo_messaging._drivers.impl_rabbit' in sys.modules:
        from oslo_messaging._drivers import amqpdriver
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = min(
            amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX, IDLE_POLL_MAX)


class _Endpoint(Protocol):
    """An RPC endpoint: its methods, and the versioned target they serve."""

    target: messaging.Target


class _IndirectEndpoint:
    """Runs each call of a compute endpoint with object calls sent to the conductor."""

    def __init__(self, endpoint: _Endpoint, api: ConductorAPI) -> None:
        self._endpoint = endpoint
        self._api = api
        self.target = endpoint.target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._endpoint, name)
        if not callable(attr) or name.startswith('_'):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with obj_base.indirection(self._api):
                return attr(*args, **kwargs)
        return call


class Service(os_service.Service):
    """Serve ``manager`` on ``topic`` (with this host as server) and keep it alive."""

    def __init__(self, host: str, binary: str, topic: str, manager: Manager,
                 indirection_api: ConductorAPI | None = None, report_interval: int | None = None,
                 periodic_interval: int | None = None) -> None:
        super().__init__()
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self.indirection_api = indirection_api
        self.report_interval = report_interval or CONF.report_interval
        self.periodic_interval = periodic_interval or CONF.periodic_interval
        self.service_ref: objects.Service | None = None
        self.rpcserver: messaging.MessageHandlingServer | None = None
        self._stopping = threading.Event()
        # Orders a stop against a start still in progress (a SIGTERM during start-up).
        self._start_lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _call(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        if self.indirection_api is not None:
            with obj_base.indirection(self.indirection_api):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)

    def start(self) -> None:
        """Register, run ``init_host``, serve the topic, then report the first heartbeat.

        The first heartbeat comes after the RPC server has declared its queue, so a
        service seen beating takes messages: a message sent to it from then on waits in
        its queue instead of being dropped by the broker.
        """
        context = nl_context.get_admin_context()
        self._wait_for_conductor(context)
        self._call(self._register, context)
        self._call(self.manager.init_host)
        endpoints = [self.manager] + list(getattr(self.manager, 'additional_endpoints', []))
        if self.indirection_api is not None:
            endpoints = [_IndirectEndpoint(e, self.indirection_api) for e in endpoints]
        target = messaging.Target(topic=self.topic, server=self.host)
        _bound_idle_poll()
        with self._start_lock:
            if self._stopping.is_set():
                return
            self.rpcserver = rpc.get_server(target, endpoints)
            self.rpcserver.start()
        self._call(self._heartbeat)
        self._start_loop('heartbeat', self.report_interval, self._heartbeat)
        self._start_loop('periodic', self.periodic_interval, self._periodic)
        LOG.info('%s started on %s (topic %s)', self.binary, self.host, self.topic)

    def _wait_for_conductor(self, context: nl_context.RequestContext) -> None:
        """A service whose objects go to a conductor (compute) waits until one answers:
        started together with the conductor, its first object call would otherwise go
        to a queue that does not exist yet and be dropped."""
        api = self.indirection_api or obj_base.current_indirection_api()
        if hasattr(api, 'wait_until_ready'):
            api.wait_until_ready(context)

    def _register(self, context: nl_context.RequestContext) -> None:
        """Find or create this service's record (heartbeats start once it serves)."""
        ref = objects.Service.get_by_host_and_binary(context, self.host, self.binary)
        if ref is None:
            ref = objects.Service(context, host=self.host, binary=self.binary,
                                  topic=self.topic, report_count=0)
            ref.create()
        self.service_ref = ref

    def _start_loop(self, name: str, interval: int, fn: Callable[[], Any]) -> None:
        """Call ``fn`` every ``interval`` seconds, or sooner when ``fn`` returns a smaller
        number of seconds until it is due again (periodic tasks with their own spacing)."""
        def loop() -> None:
            wait: float = interval
            while not self._stopping.wait(wait):
                wait = interval
                try:
                    due_in = self._call(fn)
                    if isinstance(due_in, (int, float)) and due_in > 0:
                        wait = min(interval, due_in)
                except Exception:
                    LOG.exception('%s of %s failed', name, self.binary)
        self._threads.append(executor.start_thread('%s-%s' % (self.binary, name), loop))

    def _heartbeat(self) -> None:
        try:
            self._service_ref().heartbeat()
        except exception.ServiceNotFound:
            LOG.warning('Service record of %s on %s vanished; recreating it',
                        self.binary, self.host)
            self._register(nl_context.get_admin_context())
            self._service_ref().heartbeat()

    def _service_ref(self) -> objects.Service:
        if self.service_ref is None:
            raise RuntimeError('%s on %s beats before it registered' % (self.binary,
                                                                       self.host))
        return self.service_ref

    def _periodic(self) -> float:
        return self.manager.periodic_tasks(nl_context.get_admin_context())

    def stop(self, graceful: bool = True) -> None:
        """Stop taking messages, let the ones in progress finish, stop the loops."""
        self._stopping.set()
        with self._start_lock:
            # A start in progress has started the RPC server by now, or never will.
            rpcserver = self.rpcserver
        if rpcserver is not None:
            try:
                rpcserver.stop()
                rpcserver.wait()
            except Exception:
                LOG.exception('Error stopping the RPC server of %s', self.binary)
        # Work an endpoint handed to a thread (a compute's build) finishes too.
        executor.wait_background(CONF.graceful_shutdown_timeout)
        for thread in self._threads:
            # A heartbeat or periodic run in progress ends with its database write.
            thread.join(LOOP_JOIN_TIMEOUT)
        self._call(self.manager.cleanup_host)
        super().stop(graceful=graceful)
        LOG.info('%s stopped on %s', self.binary, self.host)

    def wait(self) -> None:
        self._stopping.wait()

    def reset(self) -> None:
        """SIGHUP: re-read what can change without a restart (the policy file).

        The launcher has already re-read the config files' mutable options (oslo.log
        applies a changed ``debug`` through its mutate hook).
        """
        from novalite import policy
        policy.reset()
        LOG.info('%s on %s reloaded its configuration', self.binary, self.host)


def _reload_in_worker(service: os_service.ServiceBase) -> None:
    CONF.mutate_config_files()
    service.reset()


def _keep_workers_on_sighup(launcher: object) -> None:
    """Make a worker process reload in place on SIGHUP instead of being restarted.

    With the threading backend the launcher runs services in worker processes
    (cotyledon). Its workers answer SIGHUP by exiting, to be forked again: every RPC
    connection drops and in-flight work is cut short. A ``new_worker`` hook replaces
    that with: re-read the config files' mutable options, then ``service.reset()``.
    The eventlet backend's launchers already reload in place.

    oslo.service has no public way to this: ``launcher._manager`` (the cotyledon
    ServiceManager of its threading ServiceLauncher) and ``ServiceWrapper.service_instance``
    are its internals, pinned by tests/unit/test_service_pins.py, which fails when an
    upgrade changes them (cotyledon's ``register_hooks`` and ``Service.reload`` are public).
    """
    manager = getattr(launcher, '_manager', None)
    if manager is None or not hasattr(manager, 'register_hooks'):
        return

    def on_new_worker(service_id: str, worker_id: int, wrapper: ServiceWrapper) -> None:
        # cotyledon calls the worker's reload() on SIGHUP: this worker's own replaces the
        # class's (which exits).
        wrapper.reload = lambda: _reload_in_worker(wrapper.service_instance)
    manager.register_hooks(on_new_worker=on_new_worker)


class OneProcessLauncher:
    """Runs services in this process until SIGTERM: a one-worker daemon of the threading
    backend, without oslo.service's master process (which, with cotyledon, forks a
    worker even for one: a second process holding the same imports).

    - SIGTERM or SIGINT: a graceful stop (each service's ``stop()``: stop taking
      messages, finish those in progress), then exit 0. When that takes longer than
      ``[DEFAULT] graceful_shutdown_timeout`` seconds (0: no limit), exit 1 at once. A
      second SIGINT during the stop exits at once too.
    - SIGTERM or SIGINT during start-up (a compute still waiting for a conductor):
      exit 0 at once; nothing was served yet.
    - SIGHUP: re-read the config files' mutable options, then ``reset()`` each service
      (policy), without a restart.

    A crash ends the process; systemd restarts it (``Restart=on-failure``).
    """

    def __init__(self, services: list[os_service.ServiceBase]) -> None:
        self.services = services
        # Signal handlers only queue the signal: a SimpleQueue put is safe in a handler.
        self._signals: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._state = 'starting'

    def _on_signal(self, signo: int, frame: types.FrameType | None) -> None:
        if signo in (signal.SIGTERM, signal.SIGINT) and self._state == 'starting':
            LOG.info('Stopped by signal %d during start-up', signo)
            os._exit(0)
        if signo == signal.SIGINT and self._state == 'stopping':
            os._exit(1)
        self._signals.put(signo)

    def run(self) -> int:
        """Start the services, serve until SIGTERM, stop; returns the exit code."""
        for handled in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(handled, self._on_signal)
        self._log_options()
        try:
            for svc in self.services:
                svc.start()
        except Exception:
            LOG.exception('Error starting the service')
            self._state = 'stopping'
            self._stop()
            return 1
        self._state = 'running'
        while True:
            signo = self._signals.get()
            if signo != signal.SIGHUP:
                break
            CONF.mutate_config_files()
            self._log_options()
            for svc in self.services:
                svc.reset()
        self._state = 'stopping'
        return self._stop()

    @staticmethod
    def _log_options() -> None:
        """Every option's value at DEBUG, at start and after each reload (as
        oslo.service's launchers do), unless ``[DEFAULT] log_options`` is false."""
        if CONF.log_options:
            CONF.log_opt_values(LOG, std_logging.DEBUG)

    def _stop(self) -> int:
        timeout = CONF.graceful_shutdown_timeout
        if timeout:
            executor.start_thread('stop-timeout', self._stop_timed_out, timeout)
        for svc in reversed(self.services):
            try:
                svc.stop()
            except Exception:
                LOG.exception('Error stopping the service')
        return 0

    @staticmethod
    def _stop_timed_out(timeout: float) -> None:
        time.sleep(timeout)
        LOG.error('Graceful shutdown took longer than graceful_shutdown_timeout; exiting')
        os._exit(1)


def _prepare_fork() -> None:
    """Before the launcher forks the workers: do once what each would do by itself.

    What is imported before the fork is shared; what a worker imports on first use it
    imports alone: the models (objects import them on their first query, see
    ``novalite.db.lazy``) and their mapping, and the DB-API driver that SQLAlchemy
    imports on the first connection (PyMySQL; cryptography stays out, see
    ``novalite.db.driver``): 0.2 s of CPU in every worker. Nothing connects here. Then
    the objects alive now move out of the garbage collector's reach (``gc.freeze``): a
    collection in a worker would otherwise write to every page holding them and make
    the worker's own copy of memory it could share with the master.
    """
    from sqlalchemy import orm
    from sqlalchemy.engine import make_url

    from novalite.db.api import models as api_models  # noqa: F401
    from novalite.db.main import models as main_models  # noqa: F401
    orm.configure_mappers()
    for url in {CONF.database.connection, CONF.api_database.connection} - {None, ''}:
        try:
            make_url(url).get_dialect().import_dbapi()
        except Exception as exc:
            # The worker that uses the URL reports what is wrong with it (the URL, with
            # its password, stays out of the log).
            LOG.debug('No database driver imported before the fork: %s',
                      type(exc).__name__)
    gc.freeze()


def launch(services: list[os_service.ServiceBase], workers: int | None = None) -> int:
    """Run services in the foreground until SIGTERM; return the exit code.

    One worker of the threading backend runs in this process (``OneProcessLauncher``);
    several run under oslo.service's ProcessLauncher (a master and one process per
    worker, the services built before the fork). The eventlet backend's launchers run
    one worker in this process themselves.
    """
    workers = workers or 1
    if workers == 1 and concurrency.choose() == 'threading':
        return OneProcessLauncher(services).run()
    if workers > 1:
        _prepare_fork()
    launcher: Any = None
    for svc in services:
        if launcher is None:
            launcher = os_service.launch(CONF, svc, workers=workers,
                                         restart_method='mutate')
            _keep_workers_on_sighup(launcher)
        else:
            launcher.launch_service(svc, workers=workers)
    return launcher.wait() or 0
