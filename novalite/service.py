"""A running daemon: an RPC server for its topic, a heartbeat, and periodic tasks.

``Service`` is an oslo.service service, so ``launch()`` runs it under oslo.service's
launcher in the daemons (graceful SIGTERM, SIGHUP reload); tests and novalite-all call
``start()``/``stop()`` directly, several services in one process.
"""
from __future__ import annotations

import threading
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_service import service as os_service

from novalite import context as nl_context
from novalite import exception, objects, rpc
from novalite.conf import CONF
from novalite.objects import base as obj_base

LOG = logging.getLogger(__name__)


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
        self._call(self._register, context)
        self._call(self.manager.init_host)
        endpoints = [self.manager] + list(getattr(self.manager, 'additional_endpoints', []))
        if self.indirection_api is not None:
            endpoints = [_IndirectEndpoint(e, self.indirection_api) for e in endpoints]
        target = messaging.Target(topic=self.topic, server=self.host)
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
        def loop() -> None:
            while not self._stopping.wait(interval):
                try:
                    self._call(fn)
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

    def _periodic(self) -> None:
        self.manager.periodic_tasks(nl_context.get_admin_context())

    def stop(self, graceful: bool = True) -> None:
        """Stop taking messages, let the ones in progress finish, stop the loops."""
        self._stopping.set()
        if self.rpcserver is not None:
            try:
                self.rpcserver.stop()
                self.rpcserver.wait()
            except Exception:
                LOG.exception('Error stopping the RPC server of %s', self.binary)
        self._call(self.manager.cleanup_host)
        super().stop(graceful=graceful)

    def wait(self) -> None:
        self._stopping.wait()

    def reset(self) -> None:
        """SIGHUP: re-read what can change without a restart (log levels, policy)."""
        from novalite import policy
        policy.reset()


def launch(services: list[Service], workers: int | None = None) -> None:
    """Run services in the foreground until SIGTERM (oslo.service's launcher)."""
    launcher = os_service.ServiceLauncher(CONF, restart_method='mutate')
    for svc in services:
        launcher.launch_service(svc, workers=workers or 1)
    launcher.wait()
