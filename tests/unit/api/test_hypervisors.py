"""Tests of os-hypervisors against real SQLite API and cell databases."""
from __future__ import annotations

import datetime

import pytest
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import objects
from novalite.api.openstack import loader
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2, monkeypatch):
    # No compute host answers here: each test that needs one says what it answers.
    def no_uptime(self_, context, host):
        raise NotImplementedError()
    monkeypatch.setattr(compute_rpcapi.ComputeAPI, 'get_host_uptime', no_uptime)
    return loader.load_app()


_USAGE = {'cpu_info', 'current_workload', 'disk_available_least', 'free_disk_gb',
          'free_ram_mb', 'local_gb', 'local_gb_used', 'memory_mb', 'memory_mb_used',
          'running_vms', 'vcpus', 'vcpus_used'}


def _get(app, path, version=None, token=ADMIN):
    return call(app, 'GET', '/v2.1/os-hypervisors' + path, token=token, version=version)


@pytest.fixture
def hosts(cloud):
    """cmp1 (cell1, one server), cmp2 (cell2, disabled, down), other (cell2)."""
    cloud.add_host('cmp1')
    cloud.add_host('cmp2', cell='cell2', disabled=True, disabled_reason='repair')
    cloud.add_host('other', cell='cell2')
    server = cloud.add_instance('cmp1')
    cloud.add_instance('cmp1', deleted=True)
    with nl_context.target_cell(cloud.context, cloud.cells['cell2']) as cctxt:
        service = objects.Service.get_by_host_and_binary(cctxt, 'cmp2', 'novalite-compute')
        service.last_seen_up = timeutils.utcnow(with_timezone=True) - datetime.timedelta(
            seconds=CONF.service_down_time + 5)
        service.save()
    return server


class TestList:
    def test_list_with_integer_ids_then_uuids(self, app, cloud, hosts):
        old = _get(app, '').json['hypervisors']
        assert [h['hypervisor_hostname'] for h in old] == [
            'cmp1.local', 'cmp2.local', 'other.local']
        assert old[0] == {'id': cloud.nodes['cmp1'].id, 'hypervisor_hostname': 'cmp1.local',
                          'state': 'up', 'status': 'enabled'}
        assert (old[1]['state'], old[1]['status']) == ('down', 'disabled')
        new = _get(app, '', version='2.53').json['hypervisors']
        assert new[0]['id'] == cloud.nodes['cmp1'].uuid

    def test_detail_per_microversion(self, app, cloud, hosts):
        v21 = _get(app, '/detail').json['hypervisors'][0]
        assert _USAGE <= set(v21)
        assert v21['cpu_info'] == '{"arch": "x86_64"}'
        assert v21['service'] == {'host': 'cmp1', 'id': cloud.services['cmp1'].id,
                                  'disabled_reason': None}
        assert v21['hypervisor_type'] == 'QEMU' and v21['host_ip'] == '192.0.2.10'
        v228 = _get(app, '/detail', version='2.28').json['hypervisors'][0]
        assert v228['cpu_info'] == {'arch': 'x86_64'}
        v253 = _get(app, '/detail', version='2.53').json['hypervisors'][0]
        assert v253['service']['id'] == cloud.services['cmp1'].uuid
        v288 = _get(app, '/detail', version='2.88').json['hypervisors'][0]
        assert not _USAGE & set(v288)
        assert 'uptime' in v288

    def test_pagination_from_2_33(self, app, cloud, hosts):
        page = _get(app, '?limit=1', version='2.33').json
        assert [h['hypervisor_hostname'] for h in page['hypervisors']] == ['cmp1.local']
        assert 'marker=%s' % cloud.nodes['cmp1'].id in page['hypervisors_links'][0]['href']
        rest = _get(app, '?marker=%s' % cloud.nodes['cmp1'].id, version='2.33').json
        assert [h['hypervisor_hostname'] for h in rest['hypervisors']] == [
            'cmp2.local', 'other.local']
        assert _get(app, '?marker=999999', version='2.33').status_int == 400
        # Nova's schema takes a limit of 0 (an empty page).
        assert _get(app, '?limit=0', version='2.33').json['hypervisors'] == []
        # Before 2.33 paging parameters are ignored.
        assert len(_get(app, '?limit=1').json['hypervisors']) == 3
        uuid_page = _get(app, '/detail?marker=%s' % cloud.nodes['cmp2'].uuid,
                         version='2.53').json['hypervisors']
        assert [h['hypervisor_hostname'] for h in uuid_page] == ['other.local']

    def test_pattern_and_servers_from_2_53(self, app, cloud, hosts):
        found = _get(app, '?hypervisor_hostname_pattern=cmp&with_servers=true',
                     version='2.53').json['hypervisors']
        assert [h['hypervisor_hostname'] for h in found] == ['cmp1.local', 'cmp2.local']
        assert found[0]['servers'] == [{'name': found[0]['servers'][0]['name'],
                                        'uuid': hosts}]
        assert 'servers' not in found[1]
        v275 = _get(app, '?hypervisor_hostname_pattern=cmp2&with_servers=1',
                    version='2.75').json['hypervisors']
        assert v275[0]['servers'] == []
        assert _get(app, '?hypervisor_hostname_pattern=zzz', version='2.53').status_int == 404
        assert _get(app, '?hypervisor_hostname_pattern=cmp&limit=1',
                    version='2.53').status_int == 400
        assert _get(app, '?with_servers=maybe', version='2.53').status_int == 400
        # From 2.53 (not 2.75) unknown or repeated parameters are a 400, as in Nova.
        assert _get(app, '?bogus=1', version='2.53').status_int == 400
        assert _get(app, '?limit=1&limit=2', version='2.53').status_int == 400
        assert _get(app, '?bogus=1', version='2.52').status_int == 200
        assert _get(app, '?foo=1', version='2.75').status_int == 400

    def test_admin_only(self, app, hosts):
        assert _get(app, '', token='demo:demo').status_int == 403
        assert _get(app, '/detail', token='demo:demo').status_int == 403


class TestOne:
    def test_show_by_id_then_uuid(self, app, cloud, hosts):
        node = cloud.nodes['cmp1']
        old = _get(app, '/%s' % node.id).json['hypervisor']
        assert old['hypervisor_hostname'] == 'cmp1.local' and 'vcpus' in old
        new = _get(app, '/%s?with_servers=true' % node.uuid, version='2.53').json
        assert [s['uuid'] for s in new['hypervisor']['servers']] == [hosts]
        assert _get(app, '/%s' % node.id, version='2.53').status_int == 400
        assert _get(app, '/%s' % ('1' * 32), version='2.53').status_int == 404
        assert _get(app, '/424242').status_int == 404

    def test_search_and_servers_until_2_52(self, app, hosts):
        found = _get(app, '/cmp/search').json['hypervisors']
        assert [h['hypervisor_hostname'] for h in found] == ['cmp1.local', 'cmp2.local']
        assert 'servers' not in found[0]
        with_servers = _get(app, '/cmp1/servers').json['hypervisors']
        assert [s['uuid'] for s in with_servers[0]['servers']] == [hosts]
        assert 'servers' not in _get(app, '/other/servers').json['hypervisors'][0]
        assert _get(app, '/nothing/search').status_int == 404
        assert _get(app, '/cmp/search', version='2.53').status_int == 404
        assert _get(app, '/cmp/servers', version='2.53').status_int == 404

    def test_statistics_until_2_87(self, app, hosts):
        stats = _get(app, '/statistics').json['hypervisor_statistics']
        assert stats['count'] == 3
        assert (stats['vcpus'], stats['memory_mb'], stats['running_vms']) == (24, 49152, 3)
        assert _get(app, '/statistics', version='2.88').status_int == 404

    def test_uptime(self, app, cloud, hosts, monkeypatch):
        asked = []

        def uptime(self_, context, host):
            asked.append(host)
            if host == 'other':
                raise NotImplementedError()
            return ' 10:00:00 up 1 day,  2:00,  1 user,  load average: 0.10, 0.20, 0.30'
        monkeypatch.setattr(compute_rpcapi.ComputeAPI, 'get_host_uptime', uptime)
        node = cloud.nodes['cmp1']
        body = _get(app, '/%s/uptime' % node.id).json['hypervisor']
        assert body['uptime'].startswith(' 10:00:00 up 1 day')
        assert body['hypervisor_hostname'] == 'cmp1.local'
        # (ids repeat across cells before 2.53: those two are looked up by uuid)
        assert _get(app, '/%s/uptime' % cloud.nodes['other'].uuid,
                    version='2.53').status_int == 501
        down = _get(app, '/%s/uptime' % cloud.nodes['cmp2'].uuid, version='2.53')
        assert down.status_int == 400
        assert 'Compute service of cmp2 is unavailable' in down.json['badRequest']['message']
        assert _get(app, '/424242/uptime').status_int == 404
        assert _get(app, '/%s/uptime' % node.uuid, version='2.88').status_int == 404
        # 2.88 shows it in the detailed views; None where the host cannot tell.
        shown = _get(app, '/%s' % node.uuid, version='2.88').json['hypervisor']
        assert shown['uptime'].startswith(' 10:00:00 up')
        detail = {h['hypervisor_hostname']: h['uptime']
                  for h in _get(app, '/detail', version='2.88').json['hypervisors']}
        assert detail['other.local'] is None and detail['cmp2.local'] is None
        assert 'cmp2' not in asked  # a down host is not asked
