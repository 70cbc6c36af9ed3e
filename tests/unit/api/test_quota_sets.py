"""Tests of os-quota-sets, os-quota-class-sets and limits against real SQLite databases."""
from __future__ import annotations

import pytest

from novalite import objects
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


NETWORK = {'fixed_ips', 'floating_ips', 'security_groups', 'security_group_rules'}
INJECTED = {'injected_files', 'injected_file_content_bytes', 'injected_file_path_bytes'}


def _put(app, body, project='demo', version=None, token=ADMIN, query=''):
    return call(app, 'PUT', '/v2.1/os-quota-sets/%s%s' % (project, query),
                {'quota_set': body}, token=token, version=version)


class TestShow:
    def test_defaults_of_a_project_without_rows(self, app, cloud):
        resp = call(app, 'GET', '/v2.1/os-quota-sets/demo')
        assert resp.status_int == 200
        assert resp.json['quota_set'] == {
            'id': 'demo', 'instances': 10, 'cores': 20, 'ram': 51200, 'metadata_items': 128,
            'injected_files': 5, 'injected_file_content_bytes': 10240,
            'injected_file_path_bytes': 255, 'key_pairs': 100, 'server_groups': 10,
            'server_group_members': 10, 'fixed_ips': -1, 'floating_ips': -1,
            'security_groups': -1, 'security_group_rules': -1}

    def test_microversions_drop_network_then_injected_files(self, app, cloud):
        v236 = call(app, 'GET', '/v2.1/os-quota-sets/demo', version='2.36').json['quota_set']
        assert not NETWORK & set(v236) and INJECTED <= set(v236)
        v257 = call(app, 'GET', '/v2.1/os-quota-sets/demo', version='2.57').json['quota_set']
        assert not (NETWORK | INJECTED) & set(v257)
        assert v257['server_group_members'] == 10

    def test_config_defaults_apply(self, app, cloud):
        CONF.set_override('instances', 3, group='quota')
        try:
            resp = call(app, 'GET', '/v2.1/os-quota-sets/demo')
        finally:
            CONF.clear_override('instances', group='quota')
        assert resp.json['quota_set']['instances'] == 3

    def test_other_project_is_forbidden_to_members(self, app, cloud):
        assert call(app, 'GET', '/v2.1/os-quota-sets/other').status_int == 403
        assert call(app, 'GET', '/v2.1/os-quota-sets/other', token=ADMIN).status_int == 200

    def test_detail_counts_usage(self, app, cloud):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1')
        cloud.add_instance('cmp1', deleted=True)
        cloud.add_instance('cmp1', project_id='other')
        resp = call(app, 'GET', '/v2.1/os-quota-sets/demo/detail')
        assert resp.status_int == 200
        body = resp.json['quota_set']
        assert body['instances'] == {'limit': 10, 'in_use': 1, 'reserved': 0}
        assert body['ram'] == {'limit': 51200, 'in_use': 512, 'reserved': 0}
        assert body['id'] == 'demo'

    def test_defaults_for_anyone(self, app, cloud):
        _put(app, {'instances': 2})
        resp = call(app, 'GET', '/v2.1/os-quota-sets/demo/defaults')
        assert resp.status_int == 200
        assert resp.json['quota_set']['instances'] == 10

    def test_unknown_query_ignored_before_2_75_refused_after(self, app, cloud):
        assert call(app, 'GET', '/v2.1/os-quota-sets/demo?foo=1',
                    version='2.74').status_int == 200
        assert call(app, 'GET', '/v2.1/os-quota-sets/demo?foo=1',
                    version='2.75').status_int == 400


class TestUpdate:
    def test_update_then_show(self, app, cloud):
        resp = _put(app, {'instances': 5, 'cores': '7'})
        assert resp.status_int == 200
        assert 'id' not in resp.json['quota_set']
        assert resp.json['quota_set']['instances'] == 5
        shown = call(app, 'GET', '/v2.1/os-quota-sets/demo').json['quota_set']
        assert (shown['instances'], shown['cores']) == (5, 7)
        assert call(app, 'GET', '/v2.1/os-quota-sets/other').status_int == 403

    def test_members_cannot_update(self, app, cloud):
        assert _put(app, {'instances': 50}, token='demo:demo').status_int == 403

    def test_below_usage_refused_unless_forced(self, app, cloud):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1')
        cloud.add_instance('cmp1')
        resp = _put(app, {'instances': 1})
        assert resp.status_int == 400
        assert 'must be greater than or equal to already used' in resp.json[
            'badRequest']['message']
        assert _put(app, {'instances': 1, 'force': True}).status_int == 200
        assert _put(app, {'instances': -1}).status_int == 200

    def test_user_quota_capped_by_project(self, app, cloud):
        _put(app, {'instances': 4})
        resp = _put(app, {'instances': 5}, query='?user_id=u1')
        assert resp.status_int == 400
        assert _put(app, {'instances': 3}, query='?user_id=u1').status_int == 200
        user = call(app, 'GET', '/v2.1/os-quota-sets/demo?user_id=u1', token=ADMIN)
        assert user.json['quota_set']['instances'] == 3
        project = call(app, 'GET', '/v2.1/os-quota-sets/demo', token=ADMIN)
        assert project.json['quota_set']['instances'] == 4

    @pytest.mark.parametrize('body', [{'instances': -2}, {'instances': 'x'},
                                      {'bogus': 1}, {'force': 'maybe'}])
    def test_invalid_bodies(self, app, cloud, body):
        assert _put(app, body).status_int == 400

    def test_removed_resources_refused_by_microversion(self, app, cloud):
        assert _put(app, {'floating_ips': 3}, version='2.35').status_int == 200
        assert _put(app, {'floating_ips': 3}, version='2.36').status_int == 400
        assert _put(app, {'injected_files': 3}, version='2.56').status_int == 200
        assert _put(app, {'injected_files': 3}, version='2.57').status_int == 400

    def test_delete_reverts_project_and_users(self, app, cloud):
        _put(app, {'instances': 4})
        _put(app, {'instances': 2}, query='?user_id=u1')
        resp = call(app, 'DELETE', '/v2.1/os-quota-sets/demo', token=ADMIN)
        assert resp.status_int == 202
        assert not resp.body
        for query in ('', '?user_id=u1'):
            shown = call(app, 'GET', '/v2.1/os-quota-sets/demo' + query, token=ADMIN)
            assert shown.json['quota_set']['instances'] == 10
        assert call(app, 'DELETE', '/v2.1/os-quota-sets/demo').status_int == 403


class TestQuotaClasses:
    def test_show_default_class_per_microversion(self, app, cloud):
        old = call(app, 'GET', '/v2.1/os-quota-class-sets/default', token=ADMIN)
        assert old.status_int == 200
        body = old.json['quota_class_set']
        assert body['id'] == 'default' and body['floating_ips'] == -1
        assert 'server_groups' not in body
        v250 = call(app, 'GET', '/v2.1/os-quota-class-sets/default', token=ADMIN,
                    version='2.50').json['quota_class_set']
        assert v250['server_groups'] == 10 and not NETWORK & set(v250)
        assert INJECTED <= set(v250)
        v257 = call(app, 'GET', '/v2.1/os-quota-class-sets/default', token=ADMIN,
                    version='2.57').json['quota_class_set']
        assert not INJECTED & set(v257)

    def test_update_default_class_changes_everyones_defaults(self, app, cloud):
        resp = call(app, 'PUT', '/v2.1/os-quota-class-sets/default',
                    {'quota_class_set': {'instances': 7, 'server_groups': 2}}, token=ADMIN,
                    version='2.50')
        assert resp.status_int == 200
        assert 'id' not in resp.json['quota_class_set']
        assert resp.json['quota_class_set']['instances'] == 7
        quotas = call(app, 'GET', '/v2.1/os-quota-sets/demo').json['quota_set']
        assert (quotas['instances'], quotas['server_groups']) == (7, 2)
        defaults = call(app, 'GET', '/v2.1/os-quota-sets/demo/defaults').json['quota_set']
        assert defaults['instances'] == 7

    def test_other_class_does_not_change_defaults(self, app, cloud):
        call(app, 'PUT', '/v2.1/os-quota-class-sets/gold',
             {'quota_class_set': {'cores': 99}}, token=ADMIN)
        gold = call(app, 'GET', '/v2.1/os-quota-class-sets/gold', token=ADMIN)
        assert gold.json['quota_class_set']['cores'] == 99
        assert call(app, 'GET', '/v2.1/os-quota-sets/demo').json['quota_set']['cores'] == 20

    def test_group_quotas_are_taken_before_2_50_shown_from_it_admin_only(self, app, cloud):
        # Nova's schema below 2.50 takes server_groups (stored); only the view hides it.
        body = {'quota_class_set': {'server_groups': 2}}
        resp = call(app, 'PUT', '/v2.1/os-quota-class-sets/default', body, token=ADMIN)
        assert resp.status_int == 200
        assert 'server_groups' not in resp.json['quota_class_set']
        shown = call(app, 'GET', '/v2.1/os-quota-class-sets/default', token=ADMIN,
                     version='2.50').json['quota_class_set']
        assert shown['server_groups'] == 2
        assert call(app, 'PUT', '/v2.1/os-quota-class-sets/default', body,
                    version='2.50').status_int == 403
        assert call(app, 'GET', '/v2.1/os-quota-class-sets/default').status_int == 403


class TestLimits:
    def test_absolute_limits_and_usage(self, app, cloud):
        cloud.add_host('cmp1')
        cloud.add_instance('cmp1')
        objects.InstanceGroup(cloud.context, name='g', policy='affinity',
                              project_id='demo', user_id='demo').create()
        resp = call(app, 'GET', '/v2.1/limits')
        assert resp.status_int == 200
        assert resp.json['limits']['rate'] == []
        absolute = resp.json['limits']['absolute']
        assert absolute['maxTotalInstances'] == 10
        assert absolute['maxServerMeta'] == absolute['maxImageMeta'] == 128
        assert absolute['maxSecurityGroups'] == -1
        assert (absolute['totalInstancesUsed'], absolute['totalCoresUsed'],
                absolute['totalRAMUsed'], absolute['totalServerGroupsUsed']) == (1, 1, 512, 1)

    def test_fields_leave_with_microversions(self, app, cloud):
        def absolute(version):
            return call(app, 'GET', '/v2.1/limits', version=version).json['limits']['absolute']
        assert 'maxTotalFloatingIps' in absolute('2.35')
        v236 = absolute('2.36')
        assert not {'maxTotalFloatingIps', 'maxSecurityGroups', 'maxSecurityGroupRules',
                    'totalFloatingIpsUsed', 'totalSecurityGroupsUsed'} & set(v236)
        assert 'maxImageMeta' in v236 and 'maxImageMeta' not in absolute('2.39')
        assert 'maxPersonality' in absolute('2.56')
        v257 = absolute('2.57')
        assert not {'maxPersonality', 'maxPersonalitySize'} & set(v257)
        assert v257['maxServerGroupMembers'] == 10

    def test_project_quota_is_reflected(self, app, cloud):
        _put(app, {'cores': 3})
        absolute = call(app, 'GET', '/v2.1/limits').json['limits']['absolute']
        assert absolute['maxTotalCores'] == 3

    def test_other_project_for_admins_only(self, app, cloud):
        _put(app, {'cores': 3}, project='other')
        assert call(app, 'GET', '/v2.1/limits?tenant_id=other').status_int == 403
        resp = call(app, 'GET', '/v2.1/limits?tenant_id=other', token=ADMIN)
        assert resp.json['limits']['absolute']['maxTotalCores'] == 3

    def test_unknown_query_refused_from_2_75(self, app, cloud):
        assert call(app, 'GET', '/v2.1/limits?foo=1', version='2.74').status_int == 200
        assert call(app, 'GET', '/v2.1/limits?foo=1', version='2.75').status_int == 400
