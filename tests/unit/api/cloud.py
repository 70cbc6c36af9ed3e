"""A small deployment for the admin API tests: cells with computes, nodes and servers."""
from __future__ import annotations

import uuid
from typing import Any

from novalite import context as nl_context
from novalite import objects
from novalite.db import engine
from novalite.db.main import models as main_models

ADMIN = 'admin:admin'


class Cloud:
    """cell0 and two cells on SQLite; hosts get a service, a node and a host mapping."""

    def __init__(self, tmp_path: Any) -> None:
        self.context = nl_context.get_admin_context()
        self.cells: dict[str, Any] = {}
        for name, cell_uuid in (('cell0', objects.CellMapping.CELL0_UUID),
                                ('cell1', str(uuid.uuid4())), ('cell2', str(uuid.uuid4()))):
            url = 'sqlite:///%s' % (tmp_path / ('%s.db' % name))
            main_models.Base.metadata.create_all(engine.get_engine(url))
            cell = objects.CellMapping(self.context, uuid=cell_uuid, name=name,
                                       transport_url='none:///', database_connection=url)
            cell.create()
            self.cells[name] = cell
        self.nodes: dict[str, Any] = {}
        self.services: dict[str, Any] = {}

    def add_service(self, cell: str, host: str, binary: str, **values: Any) -> Any:
        with nl_context.target_cell(self.context, self.cells[cell]) as cctxt:
            service = objects.Service(cctxt, host=host, binary=binary,
                                      topic=binary.split('-')[-1], **values)
            service.create()
            service.heartbeat()
        return service

    def add_host(self, name: str, cell: str = 'cell1', **service_values: Any) -> Any:
        """A compute service, its node and its host mapping; the node."""
        service = self.add_service(cell, name, 'novalite-compute', **service_values)
        with nl_context.target_cell(self.context, self.cells[cell]) as cctxt:
            node = objects.ComputeNode(
                cctxt, uuid=str(uuid.uuid4()), service_id=service.id, host=name, vcpus=8,
                memory_mb=16384, local_gb=100, vcpus_used=1, memory_mb_used=512,
                local_gb_used=1, hypervisor_type='QEMU', hypervisor_version=8002000,
                hypervisor_hostname=name + '.local', cpu_info='{"arch": "x86_64"}',
                free_ram_mb=15872, free_disk_gb=99, current_workload=0, running_vms=1,
                disk_available_least=90, host_ip='192.0.2.10')
            node.create()
        objects.HostMapping(self.context, host=name,
                            cell_mapping=self.cells[cell]).create()
        self.nodes[name] = node
        self.services[name] = service
        return node

    def add_instance(self, host: str | None, cell: str = 'cell1', project_id: str = 'demo',
                     user_id: str = 'demo', deleted: bool = False) -> str:
        """A server in ``cell`` (mapped there), on ``host``; its uuid."""
        flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                                root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
        with nl_context.target_cell(self.context, self.cells[cell]) as cctxt:
            instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host=host,
                                        node=host + '.local' if host else None,
                                        project_id=project_id, user_id=user_id,
                                        vm_state='active', flavor=flavor, vcpus=1,
                                        memory_mb=512, display_name='vm')
            instance.create()
            if deleted:
                instance.destroy()
        objects.InstanceMapping(self.context, instance_uuid=instance.uuid,
                                cell_mapping=self.cells[cell], project_id=project_id,
                                user_id=user_id, queued_for_delete=deleted).create()
        return instance.uuid

