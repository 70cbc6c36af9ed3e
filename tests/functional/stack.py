"""The whole novalite stack in one process, for functional tests.

Real services over oslo.messaging's ``fake://`` transport, SQLite files for the API
database, cell0 and cell1, the REAL Placement (openstack-placement, over HTTP on
loopback), the fake virt driver on N compute hosts, a Glance test double, and the
paste-deployed API served over HTTP. Tests drive it with ``requests``.
"""
from __future__ import annotations

import os
import time
from typing import Any

import oslo_messaging as messaging
import requests
from keystoneauth1 import loading as ks_loading

from novalite import context as nl_context
from novalite import objects, rpc
from novalite.compute import manager as compute_manager
from novalite.conductor import manager as conductor_manager
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.db import engine, migration
from novalite.image import glance
from novalite.scheduler import manager as scheduler_manager
from novalite.service import Service
from novalite.virt import fake
from tests.fixtures.glance import GlanceDouble
from tests.fixtures.placement import PlacementServer
from tests.fixtures.wsgi_server import WSGIServer

ADMIN = {'X-Auth-Token': 'admin:admin'}


class Stack:
    """Start with ``start()``, stop with ``stop()``; ``api`` is the API's base URL."""

    def __init__(self, tmp_dir: str, compute_hosts: tuple[str, ...] = ('host1', 'host2'),
                 overrides: dict[tuple[str | None, str], Any] | None = None) -> None:
        self.tmp_dir = tmp_dir
        self.compute_hosts = compute_hosts
        self.overrides = overrides or {}
        self.services: list[Service] = []
        self.computes: dict[str, Service] = {}
        self.placement = PlacementServer(tmp_dir)
        self.glance = GlanceDouble()
        self.api_server: WSGIServer | None = None
        self.api = ''
        self.image: dict = {}

    def _db(self, name: str) -> str:
        return 'sqlite:///%s' % os.path.join(self.tmp_dir, name + '.sqlite')

    def _configure(self, placement_url: str, glance_url: str) -> None:
        settings: dict[tuple[str | None, str], Any] = {
            (None, 'transport_url'): 'fake://',
            (None, 'host'): 'controller',
            (None, 'report_interval'): 1,
            (None, 'periodic_interval'): 60,
            (None, 'rpc_response_timeout_scheduler'): 30,
            ('api_database', 'connection'): self._db('api'),
            ('database', 'connection'): self._db('cell1'),
            ('api', 'auth_strategy'): 'noauth2',
            ('placement', 'auth_type'): 'admin_token',
            ('placement', 'token'): 'admin',
            ('placement', 'endpoint'): placement_url,
            ('glance', 'endpoint_override'): glance_url,
            ('glance', 'num_retries'): 0,
        }
        settings.update(self.overrides)
        for (group, name), value in settings.items():
            CONF.set_override(name, value, group=group)

    def start(self) -> Stack:
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> Stack:
        CONF([], project='novalite', default_config_files=[])
        # Options that exist only once oslo.messaging and keystoneauth's admin_token
        # plugin have registered them.
        messaging.get_rpc_transport(CONF, url='fake://').cleanup()
        CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                           group='placement')
        placement_url = self.placement.start()
        self.image = self.glance.add_image('cirros-tiny')
        glance_url = self.glance.start()
        self._configure(placement_url, glance_url)
        glance.reset()
        objects.register_all()
        for name, database in (('api', 'api'), ('cell0', 'main'), ('cell1', 'main')):
            migration.db_sync(database, url=self._db(name))
        rpc.init(CONF)
        ctx = nl_context.get_admin_context()
        objects.CellMapping(ctx, uuid=objects.CellMapping.CELL0_UUID, name='cell0',
                            transport_url='none:///',
                            database_connection=self._db('cell0')).create()
        cell1 = objects.CellMapping(ctx, uuid='11111111-1111-1111-1111-111111111111',
                                    name='cell1', transport_url='fake://',
                                    database_connection=self._db('cell1'))
        cell1.create()

        self._add(Service('controller', 'novalite-conductor', conductor_rpcapi.RPC_TOPIC,
                          conductor_manager.ConductorManager(host='controller')))
        self._add(Service('controller', 'novalite-scheduler', 'scheduler',
                          scheduler_manager.SchedulerManager()))
        for host in self.compute_hosts:
            self.start_compute(host)
        self.discover_hosts(cell1)

        from novalite.api.openstack import loader
        self.api_server = WSGIServer(loader.load_app()).start()
        self.api = self.api_server.url + '/v2.1'
        return self

    def _add(self, svc: Service) -> Service:
        svc.start()
        self.services.append(svc)
        return svc

    def start_compute(self, host: str) -> Service:
        mgr = compute_manager.ComputeManager(host=host, driver=fake.FakeDriver())
        svc = self._add(Service(host, 'novalite-compute', 'compute', mgr,
                                indirection_api=conductor_rpcapi.ConductorAPI()))
        self.computes[host] = svc
        return svc

    def discover_hosts(self, cell: Any) -> None:
        ctx = nl_context.get_admin_context()
        with nl_context.target_cell(ctx, cell) as cctxt:
            for node in objects.ComputeNodeList.get_all_by_not_mapped(cctxt):
                objects.HostMapping(ctx, host=node.host, cell_mapping=cell).create()
                node.mapped = 1
                node.save()

    def stop(self) -> None:
        if self.api_server is not None:
            self.api_server.stop()
            self.api_server = None
        for svc in reversed(self.services):
            try:
                svc.stop()
            except Exception:  # noqa: BLE001 - stop the rest whatever one does
                pass
        rpc.cleanup()
        engine.dispose_all()
        self.placement.stop()
        self.glance.stop()
        glance.reset()
        CONF.reset()
        CONF.clear_override('transport_url')

    # -- helpers for tests -------------------------------------------------------------

    def request(self, method: str, path: str, token: str = 'admin:admin',
                version: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {'X-Auth-Token': token}
        if version:
            headers['OpenStack-API-Version'] = 'compute %s' % version
        headers.update(kwargs.pop('headers', {}))
        return requests.request(method, self.api + path, headers=headers, timeout=30,
                                **kwargs)

    def placement_get(self, path: str) -> dict:
        resp = requests.get(self.placement.url + path, timeout=10,
                            headers={'X-Auth-Token': 'admin',
                                     'OpenStack-API-Version': 'placement 1.39'})
        resp.raise_for_status()
        return resp.json()

    def wait_for_status(self, server_id: str, statuses: tuple[str, ...],
                        timeout: float = 20.0, **kwargs: Any) -> dict:
        deadline = time.monotonic() + timeout
        server: dict = {}
        while time.monotonic() < deadline:
            resp = self.request('GET', '/servers/%s' % server_id, **kwargs)
            if resp.status_code == 404 and 'DELETED' in statuses:
                return {}
            resp.raise_for_status()
            server = resp.json()['server']
            if server['status'] in statuses:
                return server
            time.sleep(0.05)
        raise AssertionError('server %s still %s after %ss (wanted %s)'
                             % (server_id, server.get('status'), timeout, statuses))

    def wait_for_deleted(self, server_id: str, timeout: float = 20.0, **kwargs: Any) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.request('GET', '/servers/%s' % server_id, **kwargs).status_code == 404:
                return
            time.sleep(0.05)
        raise AssertionError('server %s not gone after %ss' % (server_id, timeout))
