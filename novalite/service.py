"""A running daemon: an RPC server for its topic, a heartbeat, and periodic tasks.

``Service`` is an oslo.service service, so ``launch()`` runs it under oslo.service's
launcher in the daemons: SIGTERM stops taking messages, lets those in progress finish
(at most ``[DEFAULT] graceful_shutdown_timeout`` seconds) and exits 0; SIGHUP re-reads
the mutable options of the config files (log levels) and the policy file without
restarting the RPC server. Tests and novalite-all call ``start()``/``stop()`` directly,
several services in one process.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import context as nl_context
from novalite import exception, objects, rpc, utils
from novalite.conf import CONF
from novalite.objects import base as obj_base

LOG = logging.getLogger(__name__)

IDLE_POLL_MAX = 0.25
# How long stop() waits for a heartbeat or periodic run in progress.
LOOP_JOIN_TIMEOUT = 10.0


def _bound_idle_poll() -> None:
    """Make an idle AMQP listener poll at most every ``IDLE_POLL_MAX`` seconds.

    Stopping an RPC server waits for the listener's poll in progress, which on an idle
    bus grows to oslo.messaging's 5 s: an idle daemon took up to 5 s to exit on
    SIGTERM. Four wake-ups a second while idle cost nothing. Only once the rabbit
    driver is loaded: it derives an option's bound from the constant at import.
    """
    if 'oslo_messaging._drivers.impl_rabbit' in sys.modules:
        from oslo_messaging._drivers import amqpdriver
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = min(
            amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX, IDLE_POLL_MAX)


class _IndirectEndpoint:
    """Runs each call of a compute endpoint with object calls sent to the conductor."""

    def __init__(self, endpoint: Any, api: Any) -> None:
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

    def __init__(self, host: str, binary: str, topic: str, manager: Any,
                 indirection_api: Any = None, report_interval: int | None = None,
                 periodic_interval: int | None = None) -> None:
        super().__init__()
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self.indirection_api = indirection_api
        self.report_interval = report_interval or CONF.report_interval
        self.periodic_interval = periodic_interval or CONF.periodic_interval
        self.service_ref: Any = None
        self.rpcserver: Any = None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    def _call(self, fn: Any, *args: Any) -> Any:
        if self.indirection_api is not None:
            with obj_base.indirection(self.indirection_api):
                return fn(*args)
        return fn(*args)

    def start(self) -> None:
        context = nl_context.get_admin_context()
        if hasattr(self.indirection_api, 'wait_until_ready'):
            # Compute's first object call must not go to a conductor that is not there.
            self.indirection_api.wait_until_ready(context)
        self._call(self._register, context)
        self._call(self.manager.init_host)
        endpoints = [self.manager] + list(getattr(self.manager, 'additional_endpoints', []))
        if self.indirection_api is not None:
            endpoints = [_IndirectEndpoint(e, self.indirection_api) for e in endpoints]
        target = messaging.Target(topic=self.topic, server=self.host)
        _bound_idle_poll()
        self.rpcserver = rpc.get_server(target, endpoints)
        self.rpcserver.start()
        self._start_loop('heartbeat', self.report_interval, self._heartbeat)
        self._start_loop('periodic', self.periodic_interval, self._periodic)
        LOG.info('%s started on %s (topic %s)', self.binary, self.host, self.topic)

    def _register(self, context: Any) -> None:
        ref = objects.Service.get_by_host_and_binary(context, self.host, self.binary)
        if ref is None:
            ref = objects.Service(context, host=self.host, binary=self.binary,
                                  topic=self.topic, report_count=0)
            ref.create()
        self.service_ref = ref
        ref.heartbeat()

    def _start_loop(self, name: str, interval: int, fn: Any) -> None:
        """Call ``fn`` every ``interval`` seconds, or sooner when ``fn`` returns a smaller
        number of seconds until it is due again (periodic tasks with their own spacing)."""
        def loop() -> None:
            wait = interval
            while not self._stopping.wait(wait):
                wait = interval
                try:
                    due_in = self._call(fn)
                    if isinstance(due_in, (int, float)) and due_in > 0:
                        wait = min(interval, due_in)
                except Exception:
                    LOG.exception('%s of %s failed', name, self.binary)
        thread = threading.Thread(target=loop, name='%s-%s' % (self.binary, name),
                                  daemon=True)
        thread.start()
        self._threads.append(thread)

    def _heartbeat(self) -> None:
        try:
            self.service_ref.heartbeat()
        except exception.ServiceNotFound:
            LOG.warning('Service record of %s on %s vanished; recreating it',
                        self.binary, self.host)
            self._register(nl_context.get_admin_context())

    def _periodic(self) -> float:
        return self.manager.periodic_tasks(nl_context.get_admin_context())

    def stop(self, graceful: bool = True) -> None:
        """Stop taking messages, let the ones in progress finish, stop the loops."""
        self._stopping.set()
        if self.rpcserver is not None:
            try:
                self.rpcserver.stop()
                self.rpcserver.wait()
            except Exception:
                LOG.exception('Error stopping the RPC server of %s', self.binary)
        # Work an endpoint handed to a thread (a compute's build) finishes too.
        utils.wait_spawned(CONF.graceful_shutdown_timeout)
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


def _keep_workers_on_sighup(launcher: Any) -> None:
    """Make a worker process reload in place on SIGHUP instead of being restarted.

    With the threading backend the launcher runs services in worker processes
    (cotyledon). Its workers answer SIGHUP by exiting, to be forked again: every RPC
    connection drops and in-flight work is cut short. A ``new_worker`` hook replaces
    that with: re-read the config files' mutable options, then ``service.reset()``.
    The eventlet backend's launchers already reload in place.
    """
    manager = getattr(launcher, '_manager', None)
    if manager is None or not hasattr(manager, 'register_hooks'):
        return

    def on_new_worker(service_id: Any, worker_id: int, wrapper: Any) -> None:
        wrapper.reload = lambda: _reload_in_worker(wrapper.service_instance)
    manager.register_hooks(on_new_worker=on_new_worker)


def launch(services: list[Any], workers: int | None = None) -> int:
    """Run services in the foreground until SIGTERM; return the exit code.

    One worker runs under oslo.service's ServiceLauncher, several under its
    ProcessLauncher (one process each, the services built before the fork).
    """
    launcher: Any = None
    for svc in services:
        if launcher is None:
            launcher = os_service.launch(CONF, svc, workers=workers or 1,
                                         restart_method='mutate')
            _keep_workers_on_sighup(launcher)
        else:
            launcher.launch_service(svc, workers=workers or 1)
    return launcher.wait() or 0
