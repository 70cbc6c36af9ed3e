"""Tests of the os-services API against real SQLite API and cell databases."""
from __future__ import annotations

import datetime

import pytest
from oslo_utils import timeutils, uuidutils

from novalite import context as nl_context
from novalite import objects
from novalite.api.openstack import loader
from novalite.compute import host_actions
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.main import models as main_models
from tests.unit.api.conftest import call

ADMIN = 'admin:admin'


class Cells:
    """cell0 (no services) and two cells, each with its own SQLite database."""

    def __init__(self, tmp_path) -> None:
        ctxt = nl_context.get_admin_context()
        self.cells = {}
        for name, cell_uuid in (('cell0', objects.CellMapping.CELL0_UUID),
                                ('cell1', uuidutils.generate_uuid()),
                                ('cell2', uuidutils.generate_uuid())):
            url = 'sqlite:///%s' % (tmp_path / ('%s.db' % name))
            main_models.Base.metadata.create_all(engine.get_engine(url))
            cell = objects.CellMapping(ctxt, uuid=cell_uuid, name=name, transport_url='none:///',
                                       database_connection=url)
            cell.create()
            self.cells[name] = cell

    def add_service(self, cell: str, host: str, binary: str, **values) -> objects.Service:
        ctxt = nl_context.get_admin_context()
        with nl_context.target_cell(ctxt, self.cells[cell]) as cctxt:
            service = objects.Service(cctxt, host=host, binary=binary,
                                      topic=binary.split('-')[-1], report_count=0, **values)
            service.create()
            service.heartbeat()
        if binary == 'novalite-compute':
            objects.HostMapping(ctxt, host=host, cell_mapping=self.cells[cell]).create()
        return service

    def reload(self, cell: str, service_id: int) -> objects.Service:
        with nl_context.target_cell(nl_context.get_admin_context(),
                                    self.cells[cell]) as cctxt:
            return objects.Service.get_by_id(cctxt, service_id)


@pytest.fixture
def cells(api_db, tmp_path):
    return Cells(tmp_path)


@pytest.fixture(autouse=True)
def trait_syncs(monkeypatch):
    """What the compute hosts are asked over RPC (there is none in these tests): a
    compute service enabled or disabled syncs its hosts' status trait."""
    calls = []

    def set_host_enabled(self, context, host, enabled):
        calls.append((host, enabled))
        return 'enabled' if enabled else 'disabled'
    monkeypatch.setattr(host_actions.HostAPI, 'set_host_enabled', set_host_enabled)
    return calls


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


@pytest.fixture
def deployment(cells):
    """A conductor and scheduler in cell1, a compute in each cell (cell2's one is down)."""
    services = {
        'conductor': cells.add_service('cell1', 'ctl', 'novalite-conductor'),
        'scheduler': cells.add_service('cell1', 'ctl', 'novalite-scheduler'),
        'compute1': cells.add_service('cell1', 'cmp1', 'novalite-compute'),
        'compute2': cells.add_service('cell2', 'cmp2', 'novalite-compute'),
    }
    stale = services['compute2']
    stale.last_seen_up = timeutils.utcnow(with_timezone=True) - datetime.timedelta(
        seconds=CONF.service_down_time + 5)
    stale.save()
    return services


def _by_host_binary(body: dict) -> dict:
    return {(s['host'], s['binary']): s for s in body['services']}


class TestIndex:
    def test_lists_services_of_every_cell(self, app, deployment):
        resp = call(app, 'GET', '/v2.1/os-services', token=ADMIN)
        assert resp.status_int == 200
        listed = _by_host_binary(resp.json)
        assert set(listed) == {('ctl', 'nova-conductor'), ('ctl', 'nova-scheduler'),
                               ('cmp1', 'nova-compute'), ('cmp2', 'nova-compute')}
        compute1 = listed[('cmp1', 'nova-compute')]
        assert compute1 == {
            'id': deployment['compute1'].id, 'binary': 'nova-compute', 'host': 'cmp1',
            'zone': 'nova', 'status': 'enabled', 'state': 'up',
            'updated_at': compute1['updated_at'], 'disabled_reason': None}
        updated = datetime.datetime.fromisoformat(compute1['updated_at'])
        assert abs((timeutils.utcnow() - updated).total_seconds()) < 60
        assert listed[('ctl', 'nova-conductor')]['zone'] == 'internal'
        assert listed[('cmp2', 'nova-compute')]['state'] == 'down'

    def test_zone_of_computes_is_the_default_availability_zone(self, app, deployment):
        CONF.set_override('default_availability_zone', 'az-edge')
        try:
            resp = call(app, 'GET', '/v2.1/os-services?binary=nova-compute', token=ADMIN)
        finally:
            CONF.clear_override('default_availability_zone')
        assert {s['zone'] for s in resp.json['services']} == {'az-edge'}

    def test_forced_down_from_2_11_and_uuid_ids_from_2_53(self, app, deployment):
        old = call(app, 'GET', '/v2.1/os-services', token=ADMIN, version='2.10')
        assert 'forced_down' not in old.json['services'][0]
        mid = call(app, 'GET', '/v2.1/os-services', token=ADMIN, version='2.11')
        assert all(s['forced_down'] is False for s in mid.json['services'])
        assert all(isinstance(s['id'], int) for s in mid.json['services'])
        new = call(app, 'GET', '/v2.1/os-services', token=ADMIN, version='2.53')
        assert {s['id'] for s in new.json['services']} == {
            s.uuid for s in deployment.values()}

    def test_filters_by_host_and_binary(self, app, deployment):
        resp = call(app, 'GET', '/v2.1/os-services?host=ctl', token=ADMIN)
        assert {s['binary'] for s in resp.json['services']} == {
            'nova-conductor', 'nova-scheduler'}
        resp = call(app, 'GET', '/v2.1/os-services?host=ctl&binary=nova-scheduler',
                    token=ADMIN)
        assert [s['binary'] for s in resp.json['services']] == ['nova-scheduler']
        resp = call(app, 'GET', '/v2.1/os-services?host=nowhere', token=ADMIN)
        assert resp.json == {'services': []}

    @pytest.mark.parametrize('binary', ['nova-compute', 'novalite-compute'])
    def test_binary_filter_takes_nova_and_novalite_names(self, app, deployment, binary):
        resp = call(app, 'GET', '/v2.1/os-services?binary=%s' % binary, token=ADMIN)
        assert sorted((s['host'], s['binary']) for s in resp.json['services']) == [
            ('cmp1', 'nova-compute'), ('cmp2', 'nova-compute')]

    def test_empty_filters_filter_nothing(self, app, deployment):
        resp = call(app, 'GET', '/v2.1/os-services?host=&binary=', token=ADMIN)
        assert len(resp.json['services']) == 4

    def test_unknown_filter_ignored_before_2_75_refused_after(self, app, deployment):
        resp = call(app, 'GET', '/v2.1/os-services?foo=bar', token=ADMIN, version='2.74')
        assert len(resp.json['services']) == 4
        resp = call(app, 'GET', '/v2.1/os-services?foo=bar', token=ADMIN, version='2.75')
        assert resp.status_int == 400

    def test_non_admin_is_forbidden(self, app, deployment):
        resp = call(app, 'GET', '/v2.1/os-services', token='demo:demo')
        assert resp.status_int == 403


class TestUpdate:
    def _put(self, app, service_id, body, version='2.53', token=ADMIN):
        return call(app, 'PUT', '/v2.1/os-services/%s' % service_id, body, token=token,
                    version=version)

    def test_disable_with_reason_then_enable(self, app, cells, deployment):
        compute = deployment['compute2']
        resp = self._put(app, compute.uuid, {'status': 'disabled',
                                             'disabled_reason': 'maintenance'})
        assert resp.status_int == 200
        assert resp.json['service']['id'] == compute.uuid
        assert resp.json['service']['status'] == 'disabled'
        assert resp.json['service']['disabled_reason'] == 'maintenance'
        stored = cells.reload('cell2', compute.id)
        assert (stored.disabled, stored.disabled_reason) == (True, 'maintenance')

        resp = self._put(app, compute.uuid, {'status': 'enabled'})
        assert resp.json['service']['status'] == 'enabled'
        stored = cells.reload('cell2', compute.id)
        assert (stored.disabled, stored.disabled_reason) == (False, None)

    def test_force_down_makes_the_service_down(self, app, cells, deployment):
        compute = deployment['compute1']
        resp = self._put(app, compute.uuid, {'forced_down': True})
        assert resp.json['service']['forced_down'] is True
        assert resp.json['service']['state'] == 'down'
        assert cells.reload('cell1', compute.id).forced_down is True
        listed = call(app, 'GET', '/v2.1/os-services?host=cmp1', token=ADMIN, version='2.53')
        assert listed.json['services'][0]['state'] == 'down'

    def test_only_compute_services_can_be_updated(self, app, deployment):
        resp = self._put(app, deployment['scheduler'].uuid, {'status': 'disabled'})
        assert resp.status_int == 400

    def test_reason_needs_disabled_status(self, app, deployment):
        resp = self._put(app, deployment['compute1'].uuid,
                         {'status': 'enabled', 'disabled_reason': 'why'})
        assert resp.status_int == 400
        resp = self._put(app, deployment['compute1'].uuid, {'disabled_reason': 'why'})
        assert resp.status_int == 400

    @pytest.mark.parametrize('body', [{}, {'status': 'paused'}, {'forced_down': 'maybe'},
                                      {'status': 'disabled', 'host': 'cmp1'}])
    def test_invalid_bodies(self, app, deployment, body):
        assert self._put(app, deployment['compute1'].uuid, body).status_int == 400

    def test_unknown_and_malformed_ids(self, app, deployment):
        resp = self._put(app, uuidutils.generate_uuid(), {'status': 'disabled'})
        assert resp.status_int == 404
        resp = self._put(app, 'not-a-uuid', {'status': 'disabled'})
        assert resp.status_int == 400

    def test_a_uuid_is_no_action_before_2_53(self, app, deployment):
        resp = self._put(app, deployment['compute1'].uuid,
                         {'host': 'cmp1', 'binary': 'nova-compute'}, version='2.52')
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == 'Unknown action'

    @pytest.mark.parametrize('body', [{}, {'disabled_reason': 'why'}])
    def test_no_update_requested(self, app, deployment, body):
        resp = self._put(app, deployment['compute1'].uuid, body)
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == (
            "No updates were requested. Fields 'status' or 'forced_down' should be "
            "specified.")

    def test_non_admin_is_forbidden(self, app, cells, deployment):
        compute = deployment['compute1']
        resp = self._put(app, compute.uuid, {'status': 'disabled'}, token='demo:demo')
        assert resp.status_int == 403
        assert cells.reload('cell1', compute.id).disabled is False


class TestActionsBefore253:
    """PUT /os-services/{enable,disable,disable-log-reason,force-down}: what
    openstackclient sends without a microversion."""

    def _put(self, app, action, body, version='2.1', token=ADMIN):
        return call(app, 'PUT', '/v2.1/os-services/%s' % action, body, token=token,
                    version=version)

    @pytest.mark.parametrize('binary', ['nova-compute', 'novalite-compute'])
    def test_disable_then_enable_by_host_and_binary(self, app, cells, deployment, binary):
        compute = deployment['compute2']
        resp = self._put(app, 'disable', {'host': 'cmp2', 'binary': binary})
        assert resp.status_int == 200
        assert resp.json == {'service': {'host': 'cmp2', 'binary': binary,
                                         'status': 'disabled'}}
        stored = cells.reload('cell2', compute.id)
        assert (stored.disabled, stored.disabled_reason) == (True, None)
        resp = self._put(app, 'enable', {'host': 'cmp2', 'binary': binary})
        assert resp.json['service']['status'] == 'enabled'
        assert cells.reload('cell2', compute.id).disabled is False

    def test_disable_log_reason(self, app, cells, deployment, trait_syncs):
        resp = self._put(app, 'disable-log-reason',
                         {'host': 'cmp1', 'binary': 'nova-compute',
                          'disabled_reason': 'maintenance'})
        assert resp.json == {'service': {'host': 'cmp1', 'binary': 'nova-compute',
                                         'status': 'disabled',
                                         'disabled_reason': 'maintenance'}}
        stored = cells.reload('cell1', deployment['compute1'].id)
        assert (stored.disabled, stored.disabled_reason) == (True, 'maintenance')
        assert trait_syncs == [('cmp1', False)]
        resp = self._put(app, 'disable-log-reason', {'host': 'cmp1',
                                                     'binary': 'nova-compute'})
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Missing disabled reason field'

    def test_force_down_from_2_11(self, app, cells, deployment):
        body = {'host': 'cmp1', 'binary': 'nova-compute', 'forced_down': True}
        assert self._put(app, 'force-down', body).status_int == 400  # not in 2.1's schema
        resp = self._put(app, 'force-down', body, version='2.11')
        assert resp.json == {'service': {'host': 'cmp1', 'binary': 'nova-compute',
                                         'forced_down': True}}
        assert cells.reload('cell1', deployment['compute1'].id).forced_down is True
        resp = self._put(app, 'force-down', {'host': 'cmp1', 'binary': 'nova-compute'},
                         version='2.11')
        assert resp.json['badRequest']['message'] == 'Missing forced_down field'

    def test_other_binaries_unknown_hosts_and_actions(self, app, deployment):
        resp = self._put(app, 'disable', {'host': 'ctl', 'binary': 'nova-scheduler'})
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == (
            'Updating a nova-scheduler service is not supported. Only nova-compute '
            'services can be updated.')
        resp = self._put(app, 'disable', {'host': 'nowhere', 'binary': 'nova-compute'})
        assert resp.status_int == 404
        resp = self._put(app, 'pause', {'host': 'cmp1', 'binary': 'nova-compute'})
        assert resp.status_int == 404
        resp = self._put(app, 'disable', {'host': 'cmp1'})
        assert resp.status_int == 400

    def test_non_admin_is_forbidden(self, app, cells, deployment):
        resp = self._put(app, 'disable', {'host': 'cmp1', 'binary': 'nova-compute'},
                         token='demo:demo')
        assert resp.status_int == 403
