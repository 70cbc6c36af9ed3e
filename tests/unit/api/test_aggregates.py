"""Tests of os-aggregates and os-availability-zone against real SQLite databases."""
from __future__ import annotations

import pytest

from novalite.api.openstack import loader
from novalite.conf import CONF
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def _create(app, name='agg1', zone=None, version=None):
    body = {'aggregate': {'name': name}}
    if zone is not None:
        body['aggregate']['availability_zone'] = zone
    return call(app, 'POST', '/v2.1/os-aggregates', body, token=ADMIN, version=version)


def _action(app, agg_id, body, token=ADMIN):
    return call(app, 'POST', '/v2.1/os-aggregates/%s/action' % agg_id, body, token=token)


class TestCrud:
    def test_create_show_list(self, app, cloud):
        resp = _create(app, zone='az1')
        assert resp.status_int == 200
        created = resp.json['aggregate']
        assert set(created) == {'availability_zone', 'created_at', 'deleted', 'deleted_at',
                                'id', 'name', 'updated_at'}
        assert (created['name'], created['availability_zone']) == ('agg1', 'az1')
        shown = call(app, 'GET', '/v2.1/os-aggregates/%s' % created['id'], token=ADMIN)
        assert shown.json['aggregate']['hosts'] == []
        assert shown.json['aggregate']['metadata'] == {'availability_zone': 'az1'}
        listed = call(app, 'GET', '/v2.1/os-aggregates', token=ADMIN, version='2.41')
        [one] = listed.json['aggregates']
        assert one['id'] == created['id'] and len(one['uuid']) == 36

    def test_uuid_from_2_41(self, app, cloud):
        assert 'uuid' not in _create(app, 'a', version='2.40').json['aggregate']
        assert 'uuid' in _create(app, 'b', version='2.41').json['aggregate']

    def test_duplicate_name_conflicts(self, app, cloud):
        _create(app)
        resp = _create(app)
        assert resp.status_int == 409
        assert 'conflictingRequest' in resp.json

    @pytest.mark.parametrize('body', [{}, {'aggregate': {}}, {'aggregate': {'name': ''}},
                                      {'aggregate': {'name': 'x', 'zone': 'z'}},
                                      {'aggregate': {'name': 'x',
                                                     'availability_zone': 'a:b'}}])
    def test_invalid_create_bodies(self, app, cloud, body):
        assert call(app, 'POST', '/v2.1/os-aggregates', body, token=ADMIN).status_int == 400

    def test_ids_must_be_integers_and_exist(self, app, cloud):
        assert call(app, 'GET', '/v2.1/os-aggregates/abc', token=ADMIN).status_int == 400
        assert call(app, 'GET', '/v2.1/os-aggregates/99', token=ADMIN).status_int == 404

    def test_update_name_and_zone(self, app, cloud):
        agg_id = _create(app).json['aggregate']['id']
        _create(app, 'taken')
        resp = call(app, 'PUT', '/v2.1/os-aggregates/%s' % agg_id,
                    {'aggregate': {'name': 'renamed', 'availability_zone': 'az9'}},
                    token=ADMIN)
        assert resp.status_int == 200
        body = resp.json['aggregate']
        assert (body['name'], body['availability_zone']) == ('renamed', 'az9')
        assert body['metadata'] == {'availability_zone': 'az9'}
        conflict = call(app, 'PUT', '/v2.1/os-aggregates/%s' % agg_id,
                        {'aggregate': {'name': 'taken'}}, token=ADMIN)
        assert conflict.status_int == 409
        empty = call(app, 'PUT', '/v2.1/os-aggregates/%s' % agg_id, {'aggregate': {}},
                     token=ADMIN)
        assert empty.status_int == 400

    def test_delete_only_when_empty(self, app, cloud):
        cloud.add_host('cmp1')
        agg_id = _create(app).json['aggregate']['id']
        _action(app, agg_id, {'add_host': {'host': 'cmp1'}})
        assert call(app, 'DELETE', '/v2.1/os-aggregates/%s' % agg_id,
                    token=ADMIN).status_int == 400
        _action(app, agg_id, {'remove_host': {'host': 'cmp1'}})
        resp = call(app, 'DELETE', '/v2.1/os-aggregates/%s' % agg_id, token=ADMIN)
        assert resp.status_int == 200
        assert call(app, 'GET', '/v2.1/os-aggregates/%s' % agg_id,
                    token=ADMIN).status_int == 404

    def test_placement_failing_leaves_the_host_added_and_says_what_to_run(
            self, app, cloud, monkeypatch, caplog):
        from novalite import exception
        from novalite.scheduler.client import report

        def unreachable(*args, **kwargs):
            raise exception.PlacementAPIConnectFailure(reason='connection refused')
        monkeypatch.setattr(report.SchedulerReportClient, 'add_provider_to_aggregate',
                            unreachable)
        monkeypatch.setattr(report.SchedulerReportClient, 'remove_provider_from_aggregate',
                            unreachable)
        cloud.add_host('cmp1')
        agg_id = _create(app).json['aggregate']['id']
        resp = _action(app, agg_id, {'add_host': {'host': 'cmp1'}})
        assert resp.status_int == 200
        assert resp.json['aggregate']['hosts'] == ['cmp1']
        assert 'placement sync_aggregates' in caplog.text
        assert _action(app, agg_id, {'remove_host': {'host': 'cmp1'}}).status_int == 200

    def test_admin_only(self, app, cloud):
        assert call(app, 'GET', '/v2.1/os-aggregates').status_int == 403
        assert call(app, 'POST', '/v2.1/os-aggregates',
                    {'aggregate': {'name': 'x'}}).status_int == 403


class TestActions:
    def test_add_and_remove_host(self, app, cloud):
        cloud.add_host('cmp1')
        agg_id = _create(app).json['aggregate']['id']
        resp = _action(app, agg_id, {'add_host': {'host': 'cmp1'}})
        assert resp.status_int == 200
        assert resp.json['aggregate']['hosts'] == ['cmp1']
        assert _action(app, agg_id, {'add_host': {'host': 'cmp1'}}).status_int == 409
        resp = _action(app, agg_id, {'remove_host': {'host': 'cmp1'}})
        assert resp.json['aggregate']['hosts'] == []
        assert _action(app, agg_id, {'remove_host': {'host': 'cmp1'}}).status_int == 404

    def test_unknown_host_not_found(self, app, cloud):
        agg_id = _create(app).json['aggregate']['id']
        assert _action(app, agg_id, {'add_host': {'host': 'ghost'}}).status_int == 404
        assert _action(app, agg_id, {'remove_host': {'host': 'ghost'}}).status_int == 404

    def test_host_without_mapping_is_found_in_its_cell(self, app, cloud):
        cloud.add_service('cell2', 'unmapped', 'novalite-compute')
        agg_id = _create(app).json['aggregate']['id']
        assert _action(app, agg_id, {'add_host': {'host': 'unmapped'}}).status_int == 200

    def test_host_cannot_be_in_two_zones(self, app, cloud):
        cloud.add_host('cmp1')
        first = _create(app, 'a1', zone='az1').json['aggregate']['id']
        second = _create(app, 'a2', zone='az2').json['aggregate']['id']
        same = _create(app, 'a3', zone='az1').json['aggregate']['id']
        plain = _create(app, 'a4').json['aggregate']['id']
        assert _action(app, first, {'add_host': {'host': 'cmp1'}}).status_int == 200
        resp = _action(app, second, {'add_host': {'host': 'cmp1'}})
        assert resp.status_int == 409
        assert 'az1' in resp.json['conflictingRequest']['message']
        assert _action(app, same, {'add_host': {'host': 'cmp1'}}).status_int == 200
        assert _action(app, plain, {'add_host': {'host': 'cmp1'}}).status_int == 200
        # Giving the zoneless aggregate another zone would move cmp1 to two zones.
        resp = _action(app, plain, {'set_metadata': {'metadata': {
            'availability_zone': 'az2'}}})
        assert resp.status_int == 400

    def test_set_metadata_sets_and_removes(self, app, cloud):
        agg_id = _create(app).json['aggregate']['id']
        resp = _action(app, agg_id, {'set_metadata': {'metadata': {'ssd': 'true',
                                                                   'gpu': 'no'}}})
        assert resp.json['aggregate']['metadata'] == {'ssd': 'true', 'gpu': 'no'}
        resp = _action(app, agg_id, {'set_metadata': {'metadata': {'gpu': None}}})
        assert resp.json['aggregate']['metadata'] == {'ssd': 'true'}

    def test_zone_of_hosts_with_servers_cannot_change(self, app, cloud):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1')
        agg_id = _create(app, zone='az1').json['aggregate']['id']
        _action(app, agg_id, {'add_host': {'host': 'cmp1'}})
        resp = call(app, 'PUT', '/v2.1/os-aggregates/%s' % agg_id,
                    {'aggregate': {'availability_zone': 'az2'}}, token=ADMIN)
        assert resp.status_int == 400
        assert 'contain instances' in resp.json['badRequest']['message']
        resp = _action(app, agg_id, {'set_metadata': {'metadata': {
            'availability_zone': 'az2'}}})
        assert resp.status_int == 400
        # Renaming is fine, so is setting the zone it already has.
        resp = call(app, 'PUT', '/v2.1/os-aggregates/%s' % agg_id,
                    {'aggregate': {'name': 'n', 'availability_zone': 'az1'}}, token=ADMIN)
        assert resp.status_int == 200

    @pytest.mark.parametrize('body', [{}, {'add_host': {}}, {'fly': {'host': 'x'}},
                                      {'add_host': {'host': 'x'},
                                       'remove_host': {'host': 'x'}},
                                      {'set_metadata': {'metadata': {'a': 1}}}])
    def test_invalid_actions(self, app, cloud, body):
        agg_id = _create(app).json['aggregate']['id']
        assert _action(app, agg_id, body).status_int == 400

    def test_actions_admin_only(self, app, cloud):
        cloud.add_host('cmp1')
        agg_id = _create(app).json['aggregate']['id']
        resp = _action(app, agg_id, {'add_host': {'host': 'cmp1'}}, token='demo:demo')
        assert resp.status_int == 403


class TestAvailabilityZones:
    @pytest.fixture
    def zoned(self, app, cloud):
        cloud.add_service('cell1', 'ctl', 'novalite-conductor')
        cloud.add_host('cmp1')
        cloud.add_host('cmp2', cell='cell2')
        cloud.add_host('cmp3', cell='cell2', disabled=True, disabled_reason='broken')
        az1 = _create(app, 'edge', zone='az-edge').json['aggregate']['id']
        _action(app, az1, {'add_host': {'host': 'cmp2'}})
        off = _create(app, 'off', zone='az-off').json['aggregate']['id']
        _action(app, off, {'add_host': {'host': 'cmp3'}})

    def test_index_lists_zones_without_internal(self, app, zoned):
        resp = call(app, 'GET', '/v2.1/os-availability-zone')
        assert resp.status_int == 200
        assert resp.json['availabilityZoneInfo'] == [
            {'zoneName': 'az-edge', 'zoneState': {'available': True}, 'hosts': None},
            {'zoneName': 'nova', 'zoneState': {'available': True}, 'hosts': None},
            {'zoneName': 'az-off', 'zoneState': {'available': False}, 'hosts': None}]

    def test_detail_shows_hosts_and_internal(self, app, zoned):
        resp = call(app, 'GET', '/v2.1/os-availability-zone/detail', token=ADMIN)
        zones = {z['zoneName']: z for z in resp.json['availabilityZoneInfo']}
        assert set(zones) == {'az-edge', 'nova', 'internal', 'az-off'}
        assert set(zones['internal']['hosts']) == {'ctl'}
        service = zones['nova']['hosts']['cmp1']['nova-compute']
        assert (service['available'], service['active']) == (True, True)
        assert service['updated_at']
        assert set(zones['az-edge']['hosts']) == {'cmp2'}
        assert zones['az-off'] == {'zoneName': 'az-off', 'zoneState': {'available': False},
                                   'hosts': None}

    def test_default_zone_option_names_unzoned_hosts(self, app, zoned):
        CONF.set_override('default_availability_zone', 'plain')
        try:
            resp = call(app, 'GET', '/v2.1/os-availability-zone')
        finally:
            CONF.clear_override('default_availability_zone')
        assert 'plain' in {z['zoneName'] for z in resp.json['availabilityZoneInfo']}

    def test_detail_for_admins_only(self, app, zoned):
        assert call(app, 'GET', '/v2.1/os-availability-zone/detail').status_int == 403
