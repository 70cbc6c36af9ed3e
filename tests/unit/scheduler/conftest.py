"""Fixtures of the scheduler tests: a real Placement, and SQLite API and cell databases."""
from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import oslo_messaging as messaging
import pytest
from keystoneauth1 import loading as ks_loading
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import objects, rpc
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models
from novalite.scheduler.client import report
from tests.fixtures.placement import PlacementServer

objects.register_all()

_PLACEMENT_OPTS = ('auth_type', 'token', 'endpoint')


@pytest.fixture
def placement(tmp_path):
    """A running Placement, and ``[placement]`` set to reach it with an admin token."""
    # Registered now so the overrides below can be set; the client registers the same
    # options again when it loads the admin_token plugin.
    CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='placement')
    with PlacementServer(str(tmp_path)) as server:
        CONF.set_override('auth_type', 'admin_token', group='placement')
        CONF.set_override('token', 'admin', group='placement')
        CONF.set_override('endpoint', server.url, group='placement')
        try:
            yield server
        finally:
            for name in _PLACEMENT_OPTS:
                CONF.clear_override(name, group='placement')


@pytest.fixture
def ctxt():
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['admin'],
                                     is_admin=True)


@pytest.fixture
def reportclient(placement):
    return report.SchedulerReportClient()


@pytest.fixture
def fake_rpc():
    """The default transport on ``fake://`` (target_cell needs one)."""
    # Creating a transport registers oslo.messaging's options, transport_url among them.
    probe = messaging.get_rpc_transport(CONF, url='fake://')
    probe.cleanup()
    CONF.set_override('transport_url', 'fake://')
    rpc.init(CONF)
    try:
        yield
    finally:
        rpc.cleanup()
        CONF.clear_override('transport_url')


@dataclasses.dataclass
class Cloud:
    """An API database, one cell, and a helper that adds compute hosts to both."""

    context: Any
    cell: Any
    reportclient: report.SchedulerReportClient

    def add_host(self, name: str, vcpus: int = 8, memory_mb: int = 16384,
                 local_gb: int = 100, up: bool = True, disabled: bool = False) -> str:
        """A compute service, its compute node, and the node's resource provider."""
        with nl_context.target_cell(self.context, self.cell) as cctxt:
            service = objects.Service(cctxt, host=name, binary='novalite-compute',
                                      topic='compute', disabled=disabled)
            service.create()
            service.heartbeat()
            node = objects.ComputeNode(
                cctxt, uuid=str(uuid.uuid4()), service_id=service.id, host=name,
                vcpus=vcpus, memory_mb=memory_mb, local_gb=local_gb, vcpus_used=0,
                memory_mb_used=0, local_gb_used=0, hypervisor_type='fake',
                hypervisor_version=1, hypervisor_hostname=name, cpu_info='{}')
            node.create()
        if not up:
            self.stop_heartbeats(name)
        self.reportclient.ensure_resource_provider(self.context, node.uuid, name)
        self.reportclient.set_inventory_for_provider(self.context, node.uuid, {
            'VCPU': {'total': vcpus}, 'MEMORY_MB': {'total': memory_mb, 'reserved': 512},
            'DISK_GB': {'total': local_gb}})
        return node.uuid

    def add_instance(self, host: str, instance_uuid: str | None = None,
                     vm_state: str = 'active', task_state: str | None = None) -> str:
        """An instance on ``host`` in the cell, as the conductor creates it."""
        flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                                root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
        with nl_context.target_cell(self.context, self.cell) as cctxt:
            instance = objects.Instance(cctxt, uuid=instance_uuid or str(uuid.uuid4()),
                                        host=host, node=host, project_id='p1',
                                        user_id='u1', vm_state=vm_state,
                                        task_state=task_state, flavor=flavor)
            instance.create()
        return instance.uuid

    def stop_heartbeats(self, name: str) -> None:
        """Make the service of ``name`` look dead since long ago."""
        with nl_context.target_cell(self.context, self.cell) as cctxt:
            service = objects.Service.get_by_host_and_binary(cctxt, name, 'novalite-compute')
            service.last_seen_up = timeutils.utcnow(with_timezone=True).replace(year=2000)
            service.save()


@pytest.fixture
def cloud(tmp_path, placement, reportclient, fake_rpc, ctxt):
    """API DB with cell0 (never created: it must not be read) and cell1 on SQLite."""
    api_url = 'sqlite:///%s' % (tmp_path / 'api.sqlite')
    cell_url = 'sqlite:///%s' % (tmp_path / 'cell1.sqlite')
    api_models.Base.metadata.create_all(engine.get_engine(api_url))
    main_models.Base.metadata.create_all(engine.get_engine(cell_url))
    CONF.set_override('connection', api_url, group='api_database')
    try:
        objects.CellMapping(ctxt, uuid=nl_context.CELL0_UUID, name='cell0',
                            transport_url='none:///',
                            database_connection='sqlite:////nonexistent/cell0').create()
        cell = objects.CellMapping(ctxt, uuid=str(uuid.uuid4()), name='cell1',
                                   transport_url='none:///', database_connection=cell_url)
        cell.create()
        yield Cloud(ctxt, cell, reportclient)
    finally:
        CONF.clear_override('connection', group='api_database')
        engine.dispose_all()
