"""Fixtures of the object tests: an API database and one cell, migrated on SQLite."""
from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conf import CONF
from novalite.db import engine, migration

objects.register_all()


@dataclasses.dataclass
class Databases:
    context: Any
    cell: Any

    def add_instance(self, host: str | None, deleted: bool = False) -> str:
        """An instance row in the cell, on ``host``; its uuid."""
        with nl_context.target_cell(self.context, self.cell) as cctxt:
            flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                                    root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
            instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host=host, node=host,
                                        project_id='p1', user_id='u1', vm_state='active',
                                        flavor=flavor)
            instance.create()
            if deleted:
                instance.destroy()
        return instance.uuid


@pytest.fixture
def dbs(tmp_path):
    api_url = 'sqlite:///%s' % (tmp_path / 'api.sqlite')
    cell_url = 'sqlite:///%s' % (tmp_path / 'cell1.sqlite')
    migration.db_sync('api', url=api_url)
    migration.db_sync('main', url=cell_url)
    CONF.set_override('connection', api_url, group='api_database')
    ctxt = nl_context.get_admin_context()
    try:
        objects.CellMapping(ctxt, uuid=nl_context.CELL0_UUID, name='cell0',
                            transport_url='none:///',
                            database_connection='sqlite:////nonexistent/cell0').create()
        cell = objects.CellMapping(ctxt, uuid=str(uuid.uuid4()), name='cell1',
                                   transport_url='none:///', database_connection=cell_url)
        cell.create()
        yield Databases(ctxt, cell)
    finally:
        CONF.clear_override('connection', group='api_database')
        engine.dispose_all()
