"""The whole cloud in one process: the base of novalite-all and of the functional tests.

The daemons' own parts, started side by side: ``novalite.service.Service`` running the
conductor, scheduler and compute managers over oslo.messaging's in-process ``fake://``
transport, SQLite files for the API database, cell0 and cell1, the real Placement
in-process (``novalite.allinone.placement``), the fake virt driver on N compute hosts,
and the paste-deployed API served over HTTP. The image service is whatever answers at
``glance_url``: the real Glance for novalite-all, a test double in the tests.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import oslo_messaging as messaging
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging
from oslo_service import opts as service_opts
from oslo_utils import uuidutils

from novalite import context as nl_context
from novalite import exception, executor, objects, rpc
from novalite.allinone.placement import PlacementServer
from novalite.allinone.wsgi import WSGIServer
from novalite.api.openstack import loader
from novalite.cmd import cell_v2
from novalite.compute import manager as compute_manager
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conductor import manager as conductor_manager
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.db import engine, migration
from novalite.image import glance
from novalite.scheduler import manager as scheduler_manager
from novalite.scheduler import rpcapi as scheduler_rpcapi
from novalite.service import Service
from novalite.virt import fake

LOG = logging.getLogger(__name__)

TRANSPORT_URL = 'fake://'
CONTROLLER_HOST = 'controller'
Settings = dict[tuple[str | None, str], Any]


class Stack:
    """Start with ``start()``, stop with ``stop()``; ``api`` is the API's versioned URL.

    :param state_dir: where the SQLite files live; an existing one is reused as it is
        (schemas upgraded, cells and hosts mapped once).
    :param glance_url: the image service's endpoint.
    :param compute_hosts: one compute service (fake driver) per name.
    :param api_port: the API's port on ``api_host``; 0 lets the OS pick one.
    :param overrides: ``{(group, option): value}`` applied over the stack's settings.
    :param config_files: novalite.conf files read first, for every service of the
        stack; the stack's settings (databases, transport, auth) win over them.
    """

    def __init__(self, state_dir: str, glance_url: str,
                 compute_hosts: tuple[str, ...] = ('compute1',), api_host: str = '127.0.0.1',
                 api_port: int = 0, overrides: Settings | None = None,
                 driver_factory: Callable[[str], Any] | None = None,
                 config_files: tuple[str, ...] = ()) -> None:
        self.state_dir = os.path.abspath(state_dir)
        self.config_files = tuple(os.path.abspath(path) for path in config_files)
        self.glance_url = glance_url
        self.compute_hosts = compute_hosts
        self.api_host = api_host
        self.api_port = api_port
        self.overrides = overrides or {}
        # The virt driver of each compute host (the fake driver unless told otherwise).
        self.driver_factory = driver_factory or (lambda host: fake.FakeDriver())
        self.placement = PlacementServer(self.state_dir)
        self.services: list[Service] = []
        self.computes: dict[str, Service] = {}
        self.api_server: WSGIServer | None = None
        self.api = ''
        self.cell1: objects.CellMapping | None = None
        self._configured = False

    def db_url(self, name: str) -> str:
        """The SQLite URL of database ``name`` (``api``, ``cell0``, ``cell1``)."""
        return 'sqlite:///%s' % os.path.join(self.state_dir, name + '.sqlite')

    def settings(self) -> Settings:
        """What the stack sets in ``CONF`` (the overrides included)."""
        settings: Settings = {
            (None, 'transport_url'): TRANSPORT_URL,
            (None, 'host'): CONTROLLER_HOST,
            (None, 'state_path'): self.state_dir,
            ('api_database', 'connection'): self.db_url('api'),
            ('database', 'connection'): self.db_url('cell1'),
            ('api', 'auth_strategy'): 'noauth2',
            ('placement', 'auth_type'): 'admin_token',
            ('placement', 'token'): 'admin',
            ('glance', 'endpoint_override'): self.glance_url,
        }
        settings.update(self.overrides)
        return settings

    def configure(self) -> None:
        """Parse ``CONF`` with no files and apply the settings (before logging is set up,
        so novalite-all can add its own; ``start()`` calls it if nobody did)."""
        os.makedirs(self.state_dir, exist_ok=True)
        CONF([], project='novalite', default_config_files=list(self.config_files))
        # Options that exist only once oslo.messaging and keystoneauth's admin_token
        # plugin have registered them.
        messaging.get_rpc_transport(CONF, url=TRANSPORT_URL).cleanup()
        CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                           group='placement')
        # The services read oslo.service's options (graceful_shutdown_timeout), which
        # its launcher registers; the stack starts them without one.
        service_opts.register_service_opts(CONF)
        for (group, name), value in self.settings().items():
            CONF.set_override(name, value, group=group)
        self._configured = True

    def start(self) -> Stack:
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> Stack:
        if not self._configured:
            self.configure()
        # The API server binds first so that a taken port fails before anything starts.
        self.api_server = WSGIServer(loader.load_app(), host=self.api_host,
                                     port=self.api_port)
        CONF.set_override('endpoint', self.placement.start(), group='placement')
        glance.reset()
        objects.register_all()
        for name, database in (('api', 'api'), ('cell0', 'main'), ('cell1', 'main')):
            migration.db_sync(database, url=self.db_url(name))
        rpc.init(CONF)
        self.cell1 = self._map_cells()

        self._add(Service(CONTROLLER_HOST, 'novalite-conductor', conductor_rpcapi.RPC_TOPIC,
                          conductor_manager.ConductorManager(host=CONTROLLER_HOST)))
        self._add(Service(CONTROLLER_HOST, 'novalite-scheduler', scheduler_rpcapi.RPC_TOPIC,
                          scheduler_manager.SchedulerManager()))
        # In parallel: a compute's start is mostly waiting for its conductor calls.
        _each_in_parallel(self.start_compute, self.compute_hosts)
        self.discover_hosts()

        self.api_server.start()
        self.api = self.api_server.url + '/v2.1'
        LOG.info('All-in-one stack up: API %s, Placement %s, Glance %s',
                 self.api, self.placement.url, self.glance_url)
        return self

    def _map_cells(self) -> objects.CellMapping:
        """cell0 and cell1 mappings, created on the first start only; returns cell1."""
        ctx = nl_context.get_admin_context()
        try:
            objects.CellMapping.get_by_uuid(ctx, objects.CellMapping.CELL0_UUID)
        except exception.CellMappingNotFound:
            objects.CellMapping(ctx, uuid=objects.CellMapping.CELL0_UUID,
                                name=cell_v2.CELL0_NAME,
                                transport_url=cell_v2.CELL0_TRANSPORT_URL,
                                database_connection=self.db_url('cell0')).create()
        for cell in objects.CellMappingList.get_all(ctx):
            if cell.database_connection == self.db_url('cell1'):
                return cell
        cell1 = objects.CellMapping(ctx, uuid=uuidutils.generate_uuid(),
                                    name=cell_v2.CELL1_NAME, transport_url=TRANSPORT_URL,
                                    database_connection=self.db_url('cell1'))
        cell1.create()
        return cell1

    def _add(self, svc: Service) -> Service:
        svc.start()
        self.services.append(svc)
        return svc

    def start_compute(self, host: str) -> Service:
        """Start a compute service on ``host`` (its node needs ``discover_hosts()``)."""
        mgr = compute_manager.ComputeManager(host=host, driver=self.driver_factory(host))
        svc = self._add(Service(host, 'novalite-compute', compute_rpcapi.RPC_TOPIC, mgr,
                                indirection_api=conductor_rpcapi.ConductorAPI()))
        self.computes[host] = svc
        return svc

    def discover_hosts(self) -> None:
        """Map the new compute hosts of cell1, as ``novalite-manage cell_v2
        discover_hosts`` does."""
        if self.cell1 is None:
            raise RuntimeError('The stack is not started: cell1 is not mapped yet.')
        cell_v2.discover_hosts(cell_uuid=self.cell1.uuid)

    def stop(self) -> None:
        """Stop everything started (idempotent) and take the settings out of ``CONF``."""
        if self.api_server is not None:
            self.api_server.stop()
            self.api_server = None
        # Computes first (their last work may still call the conductor), then the rest.
        # Each group stops in parallel: an RPC server's stop waits up to a second for
        # its idle worker threads to notice.
        computes = set(self.computes.values())
        _each_in_parallel(_stop, [svc for svc in self.services if svc in computes])
        _each_in_parallel(_stop, [svc for svc in self.services if svc not in computes])
        self.services.clear()
        self.computes.clear()
        rpc.cleanup()
        engine.dispose_all()
        self.placement.stop()
        glance.reset()
        # Only what the stack set: CONF.reset() would also drop the defaults that
        # novalite.conf sets on library options (e.g. [placement] service_type).
        if self._configured:
            for group, name in list(self.settings()) + [('placement', 'endpoint')]:
                CONF.clear_override(name, group=group)
            self._configured = False



def _stop(svc: Service) -> None:
    try:
        svc.stop()
    except Exception:  # noqa: BLE001 - the others stop whatever this one does
        LOG.exception('Error stopping %s on %s', svc.binary, svc.host)


_Item = TypeVar('_Item')


def _each_in_parallel(fn: Callable[[_Item], object], items: Iterable[_Item]) -> None:
    """``fn(item)`` for each item, each on a thread of its own; re-raises the first error."""
    errors: list[BaseException] = []

    def call(item: _Item) -> None:
        try:
            fn(item)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
    threads = [executor.start_thread('in-parallel', call, item) for item in items]
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
