"""Tests of the servers API over a compute API double (flavors from a real API DB)."""
from __future__ import annotations

import base64
import datetime
import hashlib

import pytest

from novalite import exception, objects
from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import routes, servers
from tests.unit.api.compute_api_double import ComputeAPIDouble
from tests.unit.api.conftest import call, make_flavor

ADMIN = 'admin:admin'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'


@pytest.fixture
def compute():
    return ComputeAPIDouble()


@pytest.fixture
def app(api_db, compute):
    make_flavor('1', 'm1.tiny')
    router = routes.APIRouterV21({'servers': servers.ServersController(compute)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


def _body(**server):
    values = {'name': 'vm1', 'imageRef': IMAGE, 'flavorRef': '1'}
    values.update(server)
    return {'server': values}


def _creates(compute):
    return [args for name, args in compute.calls if name == 'create']


class TestCreate:
    def test_create_returns_202_with_password_and_location(self, app, compute):
        resp = call(app, 'POST', '/v2.1/servers', _body(metadata={'a': 'b'}))
        assert resp.status_int == 202
        server = resp.json['server']
        assert set(server) == {'id', 'links', 'OS-DCF:diskConfig', 'security_groups',
                               'adminPass'}
        assert server['OS-DCF:diskConfig'] == 'MANUAL'
        assert server['security_groups'] == [{'name': 'default'}]
        assert len(server['adminPass']) == 12
        assert resp.headers['Location'] == \
            'http://localhost/v2.1/servers/%s' % server['id']
        (args,) = _creates(compute)
        assert args['flavor'].flavorid == '1'
        assert args['image_href'] == IMAGE
        assert args['name'] == 'vm1'
        assert args['metadata'] == {'a': 'b'}
        assert args['admin_password'] == server['adminPass']
        assert (args['min_count'], args['max_count']) == (1, 1)
        assert args['requested_networks'] is None

    def test_the_flavor_may_be_a_url_the_image_is_a_uuid(self, app, compute):
        resp = call(app, 'POST', '/v2.1/servers', _body(
            flavorRef='http://localhost/v2.1/flavors/1'))
        assert resp.status_int == 202
        (args,) = _creates(compute)
        assert (args['image_href'], args['flavor'].flavorid) == (IMAGE, '1')
        # Nova 34's schema takes an image id only (or '' to boot from a volume).
        resp = call(app, 'POST', '/v2.1/servers', _body(
            imageRef='http://glance/v2/images/%s' % IMAGE))
        assert resp.status_int == 400

    def test_security_groups_without_a_name_are_no_group(self, app, compute):
        """Regression: ``[{}]`` was a 500 (KeyError); Nova leaves such entries out."""
        body = _body(security_groups=[{}, {'name': 'web'}, {}])
        assert call(app, 'POST', '/v2.1/servers', body).status_int == 202
        body = _body(security_groups=[{}])
        assert call(app, 'POST', '/v2.1/servers', body).status_int == 202
        assert [c['security_groups'] for c in _creates(compute)] == [['web'], []]

    def test_all_fields_are_passed_on(self, app, compute):
        user_data = base64.b64encode(b'#!/bin/sh\n').decode()
        body = _body(adminPass='s3cret', min_count='2', max_count=3, key_name='key',
                     user_data=user_data, availability_zone='nova', accessIPv4='10.0.0.1',
                     accessIPv6='::1', config_drive='true', networks='auto',
                     description='desc', tags=['a', 'b'], hostname='vm-one')
        body['os:scheduler_hints'] = {'group': IMAGE}
        resp = call(app, 'POST', '/v2.1/servers', body, version='2.90')
        assert resp.status_int == 202, resp.body
        (args,) = _creates(compute)
        assert args['admin_password'] == 's3cret'
        assert (args['min_count'], args['max_count']) == (2, 3)
        assert args['user_data'] == user_data
        assert args['config_drive'] is True
        assert args['requested_networks'] == 'auto'
        assert args['scheduler_hints'] == {'group': IMAGE}
        assert (args['description'], args['tags'], args['hostname']) == \
            ('desc', ['a', 'b'], 'vm-one')
        assert (args['access_ip_v4'], args['access_ip_v6']) == ('10.0.0.1', '::1')

    def test_return_reservation_id(self, app):
        resp = call(app, 'POST', '/v2.1/servers', _body(return_reservation_id=True))
        assert resp.status_int == 202
        assert resp.json == {'reservation_id': 'r-abcdefgh'}

    @pytest.mark.parametrize('server, version, fragment', [
        ({'name': 'x' * 256}, None, "Invalid input for field/attribute name. Value: %s. "
                                    "'%s' is too long" % ('x' * 256, 'x' * 256)),
        ({'name': ''}, None, 'Invalid input for field/attribute name.'),
        ({'min_count': -1}, None, 'Invalid input for field/attribute min_count. Value: -1.'),
        ({'max_count': 0}, None, 'Invalid input for field/attribute max_count.'),
        ({'flavorRef': ''}, None, 'Invalid input for field/attribute flavorRef.'),
        ({'user_data': 'not base64!'}, None, 'Invalid input for field/attribute user_data.'),
        ({'accessIPv4': '300.1.1.1'}, None, 'Invalid input for field/attribute accessIPv4.'),
        ({'metadata': {'k': 1}}, None, 'Invalid input for field/attribute k.'),
        ({'networks': 'auto'}, '2.36', 'Invalid input for field/attribute networks.'),
        ({'networks': [{'uuid': IMAGE, 'bogus': 1}]}, '2.37', 'Invalid input for field'),
        ({'description': 'd'}, None, "Additional properties are not allowed ('description'"),
        ({'tags': ['a'], 'networks': 'none'}, '2.51', "('tags' was unexpected)"),
        ({'personality': [], 'networks': 'none'}, '2.57', "('personality' was unexpected)"),
        ({'hostname': 'vm', 'networks': 'none'}, '2.89', "('hostname' was unexpected)"),
        ({'hostname': 'a.b', 'networks': 'none'}, '2.90', 'field/attribute hostname'),
        ({'unknown': 1}, None, "('unknown' was unexpected)"),
    ])
    def test_bad_input_is_400_and_compute_not_called(self, app, compute, server, version,
                                                     fragment):
        resp = call(app, 'POST', '/v2.1/servers', _body(**server), version=version)
        assert resp.status_int == 400, resp.body
        assert fragment in resp.json['badRequest']['message']
        assert _creates(compute) == []

    def test_networks_required_from_2_37(self, app, compute):
        resp = call(app, 'POST', '/v2.1/servers', _body(), version='2.37')
        assert resp.status_int == 400
        assert "'networks' is a required property" in resp.json['badRequest']['message']
        resp = call(app, 'POST', '/v2.1/servers', _body(networks='none'), version='2.37')
        assert resp.status_int == 202
        assert call(app, 'POST', '/v2.1/servers', _body(hostname='vm.example.org',
                                                         networks='none'),
                    version='2.94').status_int == 202

    def test_min_count_above_max_count(self, app, compute):
        resp = call(app, 'POST', '/v2.1/servers', _body(min_count=3, max_count=2))
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'min_count must be <= max_count'
        assert _creates(compute) == []

    def test_missing_body_and_malformed_json(self, app, compute):
        assert call(app, 'POST', '/v2.1/servers', {'servers': {}}).status_int == 400
        resp = call(app, 'POST', '/v2.1/servers', b'{"server": {')
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Malformed request body'
        assert _creates(compute) == []

    @pytest.mark.parametrize('flavor_ref', ['42', 'http://localhost/v2.1/flavors/42'])
    def test_unknown_flavor_is_400(self, app, compute, flavor_ref):
        resp = call(app, 'POST', '/v2.1/servers', _body(flavorRef=flavor_ref))
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Flavor 42 could not be found.'
        assert _creates(compute) == []

    def test_private_and_disabled_flavors_are_unknown(self, app, compute):
        make_flavor('p', 'private', is_public=False, projects=['elsewhere'])
        make_flavor('d', 'disabled', disabled=True)
        for ref in ('p', 'd'):
            resp = call(app, 'POST', '/v2.1/servers', _body(flavorRef=ref))
            assert resp.status_int == 400
        assert _creates(compute) == []
        assert call(app, 'POST', '/v2.1/servers', _body(flavorRef='p'),
                    token=ADMIN).status_int == 202

    @pytest.mark.parametrize('error, code, message', [
        (exception.ImageNotFound(image_id=IMAGE), 400, 'Can not find requested image'),
        (exception.KeypairNotFound(name='k', user_id='u'), 400, 'Invalid key_name provided.'),
        (exception.FlavorNotFound(flavor_id='1'), 400, 'Flavor 1 could not be found.'),
        (exception.TooManyInstances(overs='instances', req=1, used=10, allowed=10), 403,
         'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances'),
        (exception.InstanceExists(name='vm1'), 409, 'Instance vm1 already exists.'),
    ])
    def test_compute_errors_map_to_faults(self, app, compute, error, code, message):
        compute.create_error = error
        resp = call(app, 'POST', '/v2.1/servers', _body())
        assert resp.status_int == code
        assert list(resp.json.values())[0]['message'] == message


class TestRead:
    def test_list_is_basic_and_scoped_to_project(self, app, compute):
        mine = compute.add(display_name='mine')
        compute.add(project_id='other', display_name='theirs')
        body = call(app, 'GET', '/v2.1/servers').json
        assert body == {'servers': [{
            'id': mine.uuid, 'name': 'mine',
            'links': [{'rel': 'self', 'href': 'http://localhost/v2.1/servers/%s' % mine.uuid},
                      {'rel': 'bookmark', 'href': 'http://localhost/servers/%s' % mine.uuid}],
        }]}
        opts = compute.calls[-1][1]['search_opts']
        assert opts == {'project_id': 'demo'}

    def test_non_admin_cannot_widen_or_use_admin_filters(self, app, compute):
        resp = call(app, 'GET', '/v2.1/servers?all_tenants=1')
        assert resp.status_int == 403
        call(app, 'GET', '/v2.1/servers?host=h1&project_id=other&name=vm')
        assert compute.calls[-1][1]['search_opts'] == {'project_id': 'demo', 'name': 'vm'}

    def test_admin_all_tenants_and_project_filter(self, app, compute):
        compute.add(project_id='p1')
        compute.add(project_id='p2')
        body = call(app, 'GET', '/v2.1/servers?all_tenants', token=ADMIN).json
        assert len(body['servers']) == 2
        assert 'project_id' not in compute.calls[-1][1]['search_opts']
        call(app, 'GET', '/v2.1/servers?all_tenants=true&project_id=p1&host=h', token=ADMIN)
        assert compute.calls[-1][1]['search_opts'] == {'project_id': 'p1', 'host': 'h'}
        assert call(app, 'GET', '/v2.1/servers', token=ADMIN).json == {'servers': []}
        assert call(app, 'GET', '/v2.1/servers?all_tenants=maybe',
                    token=ADMIN).status_int == 400

    def test_filters_are_translated(self, app, compute):
        call(app, 'GET', '/v2.1/servers/detail?status=active&status=build'
                         '&image=http://g/images/%s&flavor=1&tags=a,b&not-tags=c'
                         '&changes-since=2024-01-01T00:00:00Z' % IMAGE, version='2.26')
        name, args = compute.calls[-1]
        opts = args['search_opts']
        assert opts['vm_state'] == ['active', 'building']
        assert 'task_state' not in opts
        assert opts['image_ref'] == IMAGE
        assert opts['flavor'] == '1'
        assert (opts['tags'], opts['not-tags']) == (['a', 'b'], ['c'])
        assert opts['changes-since'] == datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
        assert args['expected_attrs'] == ['fault']
        assert (args['sort_keys'], args['sort_dirs']) == (['created_at'], ['desc'])

    def test_status_with_task_state(self, app, compute):
        call(app, 'GET', '/v2.1/servers?status=REBOOT')
        opts = compute.calls[-1][1]['search_opts']
        assert opts['vm_state'] == ['active']
        assert opts['task_state'] == ['reboot_pending', 'reboot_started', 'rebooting']

    def test_unknown_status(self, app, compute):
        compute.add()
        assert call(app, 'GET', '/v2.1/servers?status=nope',
                    version='2.37').json == {'servers': []}
        resp = call(app, 'GET', '/v2.1/servers?status=nope', version='2.38')
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Invalid status value'

    def test_deleted_status_is_admin_only(self, app, compute):
        assert call(app, 'GET', '/v2.1/servers?status=deleted').status_int == 403
        call(app, 'GET', '/v2.1/servers?status=deleted', token=ADMIN)
        assert compute.calls[-1][1]['search_opts']['deleted'] is True

    def test_time_filters(self, app, compute):
        assert call(app, 'GET', '/v2.1/servers?changes-since=yesterday').status_int == 400
        resp = call(app, 'GET', '/v2.1/servers?changes-since=2024-02-01T00:00:00Z'
                                '&changes-before=2024-01-01T00:00:00Z', version='2.66')
        assert resp.status_int == 400
        # changes-before does not exist before 2.66: dropped, not an error.
        call(app, 'GET', '/v2.1/servers?changes-before=2024-01-01T00:00:00Z', version='2.65')
        assert 'changes-before' not in compute.calls[-1][1]['search_opts']

    def test_sorting(self, app, compute):
        call(app, 'GET', '/v2.1/servers?sort_key=display_name&sort_key=uuid&sort_dir=asc')
        args = compute.calls[-1][1]
        assert (args['sort_keys'], args['sort_dirs']) == (['display_name', 'uuid'],
                                                          ['asc', 'asc'])
        assert call(app, 'GET', '/v2.1/servers?sort_key=host').status_int == 403
        assert call(app, 'GET', '/v2.1/servers?sort_key=host', token=ADMIN).status_int == 200
        assert call(app, 'GET', '/v2.1/servers?sort_key=nope').status_int == 400
        assert call(app, 'GET', '/v2.1/servers?sort_dir=asc&sort_dir=desc').status_int == 400
        # Regression: any other direction was a 500 from the database layer.
        bad = call(app, 'GET', '/v2.1/servers?sort_key=display_name&sort_dir=x')
        assert bad.status_int == 400
        assert bad.json['badRequest']['message'] == \
            "Unknown sort direction, must be 'desc' or 'asc'"

    def test_unknown_query_parameters(self, app, compute):
        assert call(app, 'GET', '/v2.1/servers?bogus=1', version='2.74').status_int == 200
        assert call(app, 'GET', '/v2.1/servers?bogus=1', version='2.75').status_int == 400

    def test_pagination(self, app, compute):
        base = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
        made = [compute.add(created_at=base + datetime.timedelta(minutes=i))
                for i in range(3)]
        body = call(app, 'GET', '/v2.1/servers/detail?limit=2').json
        assert [s['id'] for s in body['servers']] == [made[2].uuid, made[1].uuid]
        assert body['servers_links'] == [{
            'rel': 'next', 'href': 'http://localhost/v2.1/servers/detail?limit=2&marker=%s'
            % made[1].uuid}]
        body = call(app, 'GET', '/v2.1/servers?limit=2&marker=%s' % made[1].uuid).json
        assert [s['id'] for s in body['servers']] == [made[0].uuid]
        assert 'servers_links' not in body
        assert call(app, 'GET', '/v2.1/servers?marker=nope').status_int == 400
        assert call(app, 'GET', '/v2.1/servers?limit=x').status_int == 400

    def test_show_full_view(self, app, compute):
        inst = compute.add(host='host1', node='node1', image_ref=IMAGE, metadata={'k': 'v'},
                           tags=['t'], display_description='d', locked=True,
                           key_name='key', availability_zone='nova', progress=50,
                           launched_at=datetime.datetime(2024, 1, 2, 3, 4, 6,
                                                         tzinfo=datetime.UTC))
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid).json['server']
        assert server['status'] == 'ACTIVE'
        assert server['hostId'] == hashlib.sha224(b'demohost1').hexdigest()
        assert server['image'] == {'id': IMAGE, 'links': [
            {'rel': 'bookmark', 'href': 'http://localhost/images/%s' % IMAGE}]}
        assert server['flavor'] == {'id': '1', 'links': [
            {'rel': 'bookmark', 'href': 'http://localhost/flavors/1'}]}
        assert (server['created'], server['updated']) == ('2024-01-02T03:04:05Z',) * 2
        assert server['OS-SRV-USG:launched_at'] == '2024-01-02T03:04:06.000000'
        assert server['OS-SRV-USG:terminated_at'] is None
        assert (server['tenant_id'], server['user_id']) == ('demo', 'demo')
        assert server['metadata'] == {'k': 'v'}
        assert server['addresses'] == {}
        assert server['progress'] == 50
        assert server['OS-EXT-STS:vm_state'] == 'active'
        assert server['OS-EXT-STS:power_state'] == 1
        assert server['OS-EXT-AZ:availability_zone'] == 'nova'
        assert server['os-extended-volumes:volumes_attached'] == []
        assert server['accessIPv4'] == ''
        for key in ('locked', 'description', 'tags', 'OS-EXT-SRV-ATTR:host', 'fault'):
            assert key not in server
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid,
                      version='2.47').json['server']
        assert (server['locked'], server['description'], server['tags']) == (True, 'd', ['t'])
        assert server['flavor'] == {'vcpus': 1, 'ram': 512, 'disk': 1, 'ephemeral': 0,
                                    'swap': 0, 'original_name': 'm1.tiny',
                                    'extra_specs': {'hw:cpu_policy': 'shared'}}

    def test_flavor_extra_specs_follow_their_server_rule(self, app, compute):
        """Nova 34's servers:show:flavor-extra-specs, not the flavor API's rule."""
        from novalite import policy
        inst = compute.add()
        policy.reset()
        policy.init(rules={'os_compute_api:servers:show:flavor-extra-specs': '!',
                           'os_compute_api:os-flavor-extra-specs:index': '@'})
        try:
            for path in ('/v2.1/servers/%s' % inst.uuid, '/v2.1/servers/detail'):
                body = call(app, 'GET', path, version='2.47').json
                flavor = (body.get('server') or body['servers'][0])['flavor']
                assert 'extra_specs' not in flavor and flavor['original_name'] == 'm1.tiny'
        finally:
            policy.reset()

    def test_admin_sees_extended_attributes(self, app, compute):
        inst = compute.add(host='host1', node='node1')
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid, token=ADMIN).json['server']
        assert server['OS-EXT-SRV-ATTR:host'] == 'host1'
        assert server['OS-EXT-SRV-ATTR:hypervisor_hostname'] == 'node1'
        assert server['OS-EXT-SRV-ATTR:instance_name'] == inst.uuid

    def test_building_server_without_host_or_image(self, app, compute):
        inst = compute.add(vm_state='building', task_state='scheduling', image_ref='')
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid).json['server']
        assert (server['status'], server['hostId'], server['image']) == ('BUILD', '', '')
        assert server['progress'] == 0

    def test_error_server_shows_fault(self, app, compute):
        created = datetime.datetime(2024, 1, 3, tzinfo=datetime.UTC)
        fault = objects.InstanceFault(code=500, message='No valid host was found.',
                                      details='Traceback...', created_at=created)
        inst = compute.add(vm_state='error', fault=fault)
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid).json['server']
        assert server['status'] == 'ERROR'
        assert server['fault'] == {'code': 500, 'created': '2024-01-03T00:00:00Z',
                                   'message': 'No valid host was found.'}
        server = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid, token=ADMIN).json['server']
        assert server['fault']['details'] == 'Traceback...'
        assert ('get', {'uuid': inst.uuid, 'expected_attrs': ['fault']}) in compute.calls

    def test_other_projects_server_is_404(self, app, compute):
        inst = compute.add(project_id='other')
        resp = call(app, 'GET', '/v2.1/servers/%s' % inst.uuid)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == \
            'Instance %s could not be found.' % inst.uuid
        assert call(app, 'GET', '/v2.1/servers/%s' % inst.uuid, token=ADMIN).status_int == 200
        assert call(app, 'GET', '/v2.1/servers/nope').status_int == 404


class TestDelete:
    def test_delete(self, app, compute):
        inst = compute.add()
        resp = call(app, 'DELETE', '/v2.1/servers/%s' % inst.uuid)
        assert resp.status_int == 204
        assert ('delete', {'uuid': inst.uuid}) in compute.calls
        assert call(app, 'DELETE', '/v2.1/servers/%s' % inst.uuid).status_int == 404

    def test_cannot_delete_other_projects_server(self, app, compute):
        inst = compute.add(project_id='other')
        assert call(app, 'DELETE', '/v2.1/servers/%s' % inst.uuid).status_int == 404
        assert inst.uuid in compute.instances
