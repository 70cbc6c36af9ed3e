"""Counting usage: each server once, across the build request to instance move, and not
once its delete is accepted (issue 20's quota races)."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from novalite import context as nl_context
from novalite import objects, quota
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models
from tests.unit.scheduler.conftest import cloud, ctxt, fake_rpc, placement, reportclient

__all__ = ['cloud', 'ctxt', 'fake_rpc', 'placement', 'reportclient']


@pytest.fixture
def cells(cloud, tmp_path):
    """The scheduler tests' cloud, with a cell0 that can be read (usage counts it)."""
    cell0_url = 'sqlite:///%s' % (tmp_path / 'cell0.sqlite')
    main_models.Base.metadata.create_all(engine.get_engine(cell0_url))
    with engine.api_writer() as session:
        session.execute(sa.update(api_models.CellMapping)
                        .where(api_models.CellMapping.uuid == nl_context.CELL0_UUID)
                        .values(database_connection=cell0_url))
    return cloud


def _flavor() -> objects.Flavor:
    return objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=2,
                          root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})


def _build_request(cloud, instance_uuid: str) -> objects.BuildRequest:
    instance = objects.Instance(cloud.context, uuid=instance_uuid, project_id='p1',
                                user_id='u1', vm_state='building', display_name='vm',
                                flavor=_flavor(), vcpus=2, memory_mb=512)
    build_request = objects.BuildRequest(cloud.context, instance_uuid=instance_uuid,
                                         project_id='p1', user_id='u1', instance=instance)
    build_request.create()
    return build_request


def _instance(cloud, instance_uuid: str, task_state: str | None = None) -> None:
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        objects.Instance(cctxt, uuid=instance_uuid, project_id='p1', user_id='u1',
                         vm_state='building', task_state=task_state, flavor=_flavor(),
                         vcpus=2, memory_mb=512).create()


def test_a_server_in_its_cell_and_still_a_build_request_counts_once(cells):
    # The conductor creates the instance in its cell, then deletes the build request:
    # between the two, both exist.
    moving = str(uuid.uuid4())
    _build_request(cells, moving)
    _instance(cells, moving)
    _build_request(cells, str(uuid.uuid4()))
    _instance(cells, str(uuid.uuid4()))

    assert quota.count_usage(cells.context, 'p1') == {'instances': 3, 'cores': 6,
                                                      'ram': 1536}
    assert quota.in_use(cells.context, 'p1', 'u1')['instances'] == 3


def test_a_server_being_deleted_no_longer_counts(cells):
    _instance(cells, str(uuid.uuid4()), task_state='deleting')
    _instance(cells, str(uuid.uuid4()))

    assert quota.count_usage(cells.context, 'p1')['instances'] == 1


def test_creates_of_one_project_take_its_lock_in_turn(cells):
    with quota.project_lock('p1') as session:
        assert session.get(api_models.QuotaLock, 'p1') is not None
    with quota.project_lock('p1'):
        pass  # the second time, the row exists and is locked again
