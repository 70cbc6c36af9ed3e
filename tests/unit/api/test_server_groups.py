"""Tests of os-server-groups against real SQLite API and cell databases."""
from __future__ import annotations

import pytest

from novalite import objects
from novalite.api.openstack import loader
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def _create(app, body, version=None, token='demo:demo'):
    return call(app, 'POST', '/v2.1/os-server-groups', {'server_group': body},
                token=token, version=version)


class TestCreate:
    def test_policies_list_before_2_64(self, app, cloud):
        resp = _create(app, {'name': 'g', 'policies': ['anti-affinity']})
        assert resp.status_int == 200
        group = resp.json['server_group']
        assert set(group) == {'id', 'name', 'policies', 'members', 'metadata'}
        assert (group['policies'], group['members'], group['metadata']) == (
            ['anti-affinity'], [], {})

    def test_project_and_user_from_2_13(self, app, cloud):
        group = _create(app, {'name': 'g', 'policies': ['affinity']},
                        version='2.13').json['server_group']
        assert (group['project_id'], group['user_id']) == ('demo', 'demo')

    def test_soft_policies_from_2_15(self, app, cloud):
        body = {'name': 'g', 'policies': ['soft-affinity']}
        assert _create(app, body, version='2.14').status_int == 400
        assert _create(app, body, version='2.15').status_int == 200

    def test_policy_and_rules_from_2_64(self, app, cloud):
        resp = _create(app, {'name': 'g', 'policy': 'anti-affinity',
                             'rules': {'max_server_per_host': '2'}}, version='2.64')
        assert resp.status_int == 200
        group = resp.json['server_group']
        assert (group['policy'], group['rules']) == ('anti-affinity',
                                                     {'max_server_per_host': 2})
        assert 'policies' not in group and 'metadata' not in group
        stored = objects.InstanceGroup.get_by_uuid(cloud.context, group['id'])
        assert stored.rules == {'max_server_per_host': 2}
        plain = _create(app, {'name': 'h', 'policy': 'affinity'}, version='2.64')
        assert plain.json['server_group']['rules'] == {}

    @pytest.mark.parametrize('version,body', [
        ('2.64', {'name': 'g', 'policy': 'affinity', 'rules': {'max_server_per_host': 2}}),
        ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                  'rules': {'max_server_per_host': 0}}),
        ('2.64', {'name': 'g', 'policy': 'anti-affinity', 'rules': {'other': 1}}),
        ('2.64', {'name': 'g', 'policies': ['affinity']}),
        ('2.63', {'name': 'g', 'policy': 'affinity'}),
        ('2.1', {'name': 'g', 'policies': ['affinity', 'anti-affinity']}),
        ('2.1', {'name': 'g', 'policies': []}),
        ('2.1', {'name': 'g', 'policies': ['nearby']}),
        ('2.1', {'policies': ['affinity']}),
    ])
    def test_invalid_bodies(self, app, cloud, version, body):
        assert _create(app, body, version=version).status_int == 400

    def test_quota_of_server_groups(self, app, cloud):
        call(app, 'PUT', '/v2.1/os-quota-sets/demo', {'quota_set': {'server_groups': 1}},
             token=ADMIN)
        assert _create(app, {'name': 'g1', 'policies': ['affinity']}).status_int == 200
        resp = _create(app, {'name': 'g2', 'policies': ['affinity']})
        assert resp.status_int == 403
        assert resp.json['forbidden']['message'] == 'Quota exceeded, too many server groups.'
        assert len(objects.InstanceGroupList.get_by_project_id(cloud.context, 'demo')) == 1

    def test_create_needs_the_project_member_rule(self, app, cloud):
        from novalite import policy
        policy.reset()
        policy.init(rules={'project_member_api': 'role:nobody'})
        assert _create(app, {'name': 'g', 'policies': ['affinity']}).status_int == 403


class TestReadDelete:
    @pytest.fixture
    def groups(self, app, cloud):
        mine = _create(app, {'name': 'mine', 'policies': ['affinity']}).json['server_group']
        theirs = _create(app, {'name': 'theirs', 'policies': ['affinity']},
                         token='bob:other').json['server_group']
        return mine, theirs

    def test_show_and_project_isolation(self, app, groups):
        mine, theirs = groups
        resp = call(app, 'GET', '/v2.1/os-server-groups/%s' % mine['id'])
        assert resp.json['server_group']['name'] == 'mine'
        # Another project's group is as unknown as a uuid nobody used (Nova: 404).
        assert call(app, 'GET', '/v2.1/os-server-groups/%s' % theirs['id']).status_int == 404
        assert call(app, 'GET', '/v2.1/os-server-groups/%s' % theirs['id'],
                    token=ADMIN).status_int == 200
        assert call(app, 'GET', '/v2.1/os-server-groups/%s' % ('0' * 32)).status_int == 404

    def test_index_own_project_or_all_for_admins(self, app, groups):
        names = {g['name'] for g in call(app, 'GET', '/v2.1/os-server-groups')
                 .json['server_groups']}
        assert names == {'mine'}
        assert call(app, 'GET', '/v2.1/os-server-groups?all_projects=True').status_int == 403
        every = call(app, 'GET', '/v2.1/os-server-groups?all_projects=True', token=ADMIN)
        assert {g['name'] for g in every.json['server_groups']} == {'mine', 'theirs'}
        own = call(app, 'GET', '/v2.1/os-server-groups', token=ADMIN)
        assert own.json['server_groups'] == []

    def test_index_limit_and_offset(self, app, groups):
        _create(app, {'name': 'second', 'policies': ['affinity']})
        first = call(app, 'GET', '/v2.1/os-server-groups?limit=1').json['server_groups']
        rest = call(app, 'GET', '/v2.1/os-server-groups?offset=1').json['server_groups']
        assert [g['name'] for g in first] == ['mine']
        assert [g['name'] for g in rest] == ['second']
        assert call(app, 'GET', '/v2.1/os-server-groups?limit=-1').status_int == 400
        assert call(app, 'GET', '/v2.1/os-server-groups?foo=1',
                    version='2.75').status_int == 400

    def test_delete(self, app, groups):
        mine, theirs = groups
        assert call(app, 'DELETE',
                    '/v2.1/os-server-groups/%s' % theirs['id']).status_int == 404
        assert call(app, 'GET', '/v2.1/os-server-groups/%s' % theirs['id'],
                    token=ADMIN).status_int == 200
        resp = call(app, 'DELETE', '/v2.1/os-server-groups/%s' % mine['id'])
        assert resp.status_int == 204
        assert call(app, 'GET', '/v2.1/os-server-groups/%s' % mine['id']).status_int == 404
        assert call(app, 'DELETE', '/v2.1/os-server-groups/%s' % mine['id']).status_int == 404

    def test_members_leave_out_deleted_servers(self, app, cloud, groups):
        mine, _theirs = groups
        cloud.add_host('cmp1')
        live = cloud.add_instance('cmp1')
        gone = cloud.add_instance('cmp1', deleted=True)
        other_cell = cloud.add_instance(None, cell='cell2')
        booting = '11111111-2222-3333-4444-555555555555'
        objects.InstanceMapping(cloud.context, instance_uuid=booting, cell_mapping=None,
                                project_id='demo', user_id='demo',
                                queued_for_delete=False).create()
        objects.InstanceGroup.add_members(cloud.context, mine['id'],
                                          [live, gone, other_cell, booting])
        resp = call(app, 'GET', '/v2.1/os-server-groups/%s' % mine['id'])
        assert resp.json['server_group']['members'] == [live, other_cell, booting]
