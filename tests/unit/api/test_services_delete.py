"""DELETE /os-services/{id} against real SQLite API and cell databases and a Placement
test double."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from novalite import context as nl_context
from novalite import exception, objects
from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import routes, services
from novalite.db import engine
from novalite.db.main import models as main_models
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call


class ReportClientDouble:
    """Records provider deletions; providers in ``in_use`` answer like Placement's 409."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.in_use: set[str] = set()

    def delete_resource_provider(self, context, rp_uuid):
        if rp_uuid in self.in_use:
            raise exception.ResourceProviderInUse(uuid=rp_uuid, reason='has allocations')
        self.deleted.append(rp_uuid)


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def placement():
    return ReportClientDouble()


@pytest.fixture
def app(api_db, placement):
    router = routes.APIRouterV21(
        {'services': services.ServiceController(reportclient=placement)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


def _delete(app, service_id, version='2.53', token=ADMIN):
    return call(app, 'DELETE', '/v2.1/os-services/%s' % service_id, token=token,
                version=version)


def _rows(cloud, cell, model, **filters):
    with engine.cell_reader(_cctxt(cloud, cell)) as session:
        return list(session.scalars(select(model).filter_by(**filters)))


def _cctxt(cloud, cell):
    ctxt = nl_context.get_admin_context()
    nl_context.set_target_cell(ctxt, cloud.cells[cell])
    return ctxt


class TestDeleteCompute:
    def test_empty_compute_goes_with_node_provider_mapping_and_aggregates(
            self, app, cloud, placement):
        node = cloud.add_host('cmp1')
        other = cloud.add_host('cmp2')
        aggregate = objects.Aggregate(cloud.context, name='agg1', metadata={})
        aggregate.create()
        aggregate.add_host('cmp1')
        aggregate.add_host('cmp2')
        service = cloud.services['cmp1']
        resp = _delete(app, service.uuid)
        assert resp.status_int == 204, resp.body
        assert placement.deleted == [node.uuid]
        (row,) = _rows(cloud, 'cell1', main_models.Service, id=service.id)
        assert row.deleted == row.id and row.deleted_at is not None
        (node_row,) = _rows(cloud, 'cell1', main_models.ComputeNode, id=node.id)
        assert node_row.deleted == node_row.id
        (alive,) = _rows(cloud, 'cell1', main_models.ComputeNode, id=other.id)
        assert alive.deleted == 0
        with pytest.raises(exception.HostMappingNotFound):
            objects.HostMapping.get_by_host(cloud.context, 'cmp1')
        objects.HostMapping.get_by_host(cloud.context, 'cmp2')
        assert objects.Aggregate.get_by_id(cloud.context, aggregate.id).hosts == ['cmp2']
        listed = call(app, 'GET', '/v2.1/os-services', token=ADMIN, version='2.53').json
        assert [s['host'] for s in listed['services']] == ['cmp2']
        assert _delete(app, service.uuid).status_int == 404

    def test_refused_while_it_hosts_instances(self, app, cloud, placement):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1')
        resp = _delete(app, cloud.services['cmp1'].uuid)
        assert resp.status_int == 409
        assert 'hosting instances' in resp.json['conflictingRequest']['message']
        assert placement.deleted == []
        assert _rows(cloud, 'cell1', main_models.Service, deleted=0)
        objects.HostMapping.get_by_host(cloud.context, 'cmp1')

    def test_deleted_instances_do_not_block(self, app, cloud, placement):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1', deleted=True)
        assert _delete(app, cloud.services['cmp1'].uuid).status_int == 204

    def test_refused_while_a_migration_is_under_way(self, app, cloud, placement):
        node = cloud.add_host('cmp1')
        migration = objects.Migration(
            _cctxt(cloud, 'cell1'), source_compute='cmp1', source_node=node.hypervisor_hostname,
            dest_compute='cmp9', dest_node='cmp9.local', status='migrating',
            migration_type='migration', instance_uuid=None)
        migration.create()
        resp = _delete(app, cloud.services['cmp1'].uuid)
        assert resp.status_int == 409
        assert 'in-progress migrations' in resp.json['conflictingRequest']['message']
        migration.status = 'confirmed'
        migration.save()
        assert _delete(app, cloud.services['cmp1'].uuid).status_int == 204

    def test_refused_when_placement_still_has_allocations(self, app, cloud, placement):
        node = cloud.add_host('cmp1')
        placement.in_use.add(node.uuid)
        resp = _delete(app, cloud.services['cmp1'].uuid)
        assert resp.status_int == 409
        assert node.uuid in resp.json['conflictingRequest']['message']
        (row,) = _rows(cloud, 'cell1', main_models.Service, id=cloud.services['cmp1'].id)
        assert row.deleted == 0
        (node_row,) = _rows(cloud, 'cell1', main_models.ComputeNode, id=node.id)
        assert node_row.deleted == 0
        objects.HostMapping.get_by_host(cloud.context, 'cmp1')


class TestDeleteIds:
    def test_non_compute_service_just_goes(self, app, cloud, placement):
        scheduler = cloud.add_service('cell2', 'ctl', 'novalite-scheduler')
        assert _delete(app, scheduler.uuid).status_int == 204
        assert not _rows(cloud, 'cell2', main_models.Service, deleted=0)
        assert placement.deleted == []

    def test_integer_ids_before_2_53(self, app, cloud):
        conductor = cloud.add_service('cell1', 'ctl', 'novalite-conductor')
        assert _delete(app, conductor.uuid, version='2.52').status_int == 400
        assert _delete(app, 'abc', version='2.1').status_int == 400
        assert _delete(app, conductor.id, version='2.52').status_int == 204
        assert _delete(app, conductor.id, version='2.52').status_int == 404

    def test_integer_id_in_two_cells_is_ambiguous(self, app, cloud):
        one = cloud.add_service('cell1', 'ctl', 'novalite-conductor')
        two = cloud.add_service('cell2', 'ctl2', 'novalite-conductor')
        assert one.id == two.id
        resp = _delete(app, one.id, version='2.52')
        assert resp.status_int == 400
        assert 'multiple services' in resp.json['badRequest']['message']

    def test_unknown_and_malformed_uuids(self, app, cloud):
        assert _delete(app, '1' * 32).status_int == 404
        assert _delete(app, 'not-a-uuid').status_int == 400
        assert _delete(app, '42', version='2.1').status_int == 404

    def test_non_admin_is_forbidden(self, app, cloud):
        conductor = cloud.add_service('cell1', 'ctl', 'novalite-conductor')
        assert _delete(app, conductor.uuid, token='demo:demo').status_int == 403
        assert _rows(cloud, 'cell1', main_models.Service, deleted=0)
