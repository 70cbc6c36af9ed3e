"""Tests of os-simple-tenant-usage against real SQLite cell databases."""
from __future__ import annotations

import datetime
import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.api.openstack import loader
from novalite.api.openstack.compute import simple_tenant_usage as stu
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call

WINDOW = '?start=2024-05-01T00:00:00&end=2024-05-01T10:00:00'


def _at(day: int, hour: int, minute: int = 0) -> datetime.datetime:
    return datetime.datetime(2024, 5, day, hour, minute, tzinfo=datetime.UTC) \
        if day > 0 else datetime.datetime(2024, 4, 30 + day, hour, minute,
                                          tzinfo=datetime.UTC)


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def add_server(cloud: Cloud, cell: str, project: str, name: str, launched, terminated=None,
               vcpus=1, memory_mb=512, root_gb=1, ephemeral_gb=0) -> str:
    flavor = objects.Flavor(id=1, flavorid='f-%s' % name, name='flavor-%s' % name,
                            memory_mb=memory_mb, vcpus=vcpus, root_gb=root_gb,
                            ephemeral_gb=ephemeral_gb, swap=0, extra_specs={})
    with nl_context.target_cell(cloud.context, cloud.cells[cell]) as cctxt:
        instance = objects.Instance(
            cctxt, uuid=str(uuid.uuid4()), host='cmp1', node='cmp1.local',
            project_id=project, user_id=project, vm_state='active', flavor=flavor,
            vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=ephemeral_gb,
            display_name=name, launched_at=launched, terminated_at=terminated)
        instance.create()
        if terminated is not None:
            instance.destroy()
    return instance.uuid


@pytest.fixture
def servers(cloud):
    """p1: ``a`` all window long, ``b`` 3.5 h then deleted; p2: ``c`` its last hour
    (cell2); out of the window: ``d`` (ended before), ``e`` (began after), ``f``
    (never launched)."""
    return {
        'a': add_server(cloud, 'cell1', 'p1', 'a', _at(0, 22), vcpus=2, memory_mb=1024,
                        root_gb=10),
        'b': add_server(cloud, 'cell1', 'p1', 'b', _at(1, 2), terminated=_at(1, 5, 30)),
        'c': add_server(cloud, 'cell2', 'p2', 'c', _at(1, 9), vcpus=4, memory_mb=2048,
                        root_gb=20, ephemeral_gb=5),
        'd': add_server(cloud, 'cell2', 'p2', 'd', _at(-1, 1), terminated=_at(0, 1)),
        'e': add_server(cloud, 'cell1', 'p1', 'e', _at(1, 11)),
        'f': add_server(cloud, 'cell1', 'p1', 'f', None),
    }


def _get(app, path='', query=WINDOW, version=None, token=ADMIN):
    return call(app, 'GET', '/v2.1/os-simple-tenant-usage%s%s' % (path, query),
                token=token, version=version)


class TestIndex:
    def test_totals_per_project(self, app, servers):
        resp = _get(app)
        assert resp.status_int == 200, resp.body
        usages = {u['tenant_id']: u for u in resp.json['tenant_usages']}
        assert set(usages) == {'p1', 'p2'}
        p1 = usages['p1']
        assert p1['total_hours'] == pytest.approx(13.5)
        assert p1['total_vcpus_usage'] == pytest.approx(2 * 10 + 3.5)
        assert p1['total_memory_mb_usage'] == pytest.approx(1024 * 10 + 512 * 3.5)
        assert p1['total_local_gb_usage'] == pytest.approx(10 * 10 + 3.5)
        assert (p1['start'], p1['stop']) == ('2024-05-01T00:00:00.000000',
                                             '2024-05-01T10:00:00.000000')
        assert 'server_usages' not in p1
        assert usages['p2']['total_local_gb_usage'] == pytest.approx(25)

    def test_detailed_lists_servers_with_deleted_ones(self, app, servers):
        usages = {u['tenant_id']: u for u in _get(app, query=WINDOW + '&detailed=1')
                  .json['tenant_usages']}
        by_name = {s['name']: s for s in usages['p1']['server_usages']}
        assert set(by_name) == {'a', 'b'}
        deleted = by_name['b']
        assert deleted == {
            'hours': pytest.approx(3.5), 'flavor': 'flavor-b', 'instance_id': servers['b'],
            'name': 'b', 'memory_mb': 512, 'local_gb': 1, 'vcpus': 1, 'tenant_id': 'p1',
            'started_at': '2024-05-01T02:00:00.000000',
            'ended_at': '2024-05-01T05:30:00.000000', 'state': 'terminated',
            'uptime': 3.5 * 3600}
        assert by_name['a']['state'] == 'active' and by_name['a']['ended_at'] is None

    def test_window_still_open_stops_at_now(self, app, servers):
        usages = _get(app, query='?start=2024-05-01T09:00:00.000000').json['tenant_usages']
        p2 = next(u for u in usages if u['tenant_id'] == 'p2')
        stop = datetime.datetime.fromisoformat(p2['stop']).replace(tzinfo=datetime.UTC)
        assert abs((datetime.datetime.now(datetime.UTC) - stop).total_seconds()) < 300
        assert p2['total_hours'] > 24

    def test_bad_windows(self, app, servers):
        assert _get(app, query='?start=yesterday').status_int == 400
        reversed_window = '?start=2024-05-02T00:00:00&end=2024-05-01T00:00:00'
        resp = _get(app, query=reversed_window)
        assert resp.status_int == 400
        assert 'start time cannot occur after' in resp.json['badRequest']['message']
        assert _get(app, query='').status_int == 200

    def test_pages_across_cells_from_2_40(self, app, servers):
        page = _get(app, query=WINDOW + '&detailed=1&limit=2', version='2.40').json
        (p1,) = page['tenant_usages']
        assert {s['name'] for s in p1['server_usages']} == {'a', 'b'}
        last = sorted([servers['a'], servers['b']])[-1]
        href = page['tenant_usages_links'][0]['href']
        assert '/v2.1/os-simple-tenant-usage?' in href and 'marker=%s' % last in href
        rest = _get(app, query=WINDOW + '&detailed=1&marker=%s' % last,
                    version='2.40').json
        assert [u['tenant_id'] for u in rest['tenant_usages']] == ['p2']
        assert 'tenant_usages_links' not in rest
        assert _get(app, query=WINDOW + '&marker=nope', version='2.40').status_int == 400
        # Before 2.40 paging parameters are ignored.
        assert len(_get(app, query=WINDOW + '&limit=1').json['tenant_usages']) == 2
        assert _get(app, query=WINDOW + '&foo=1', version='2.75').status_int == 400

    def test_admin_only(self, app, servers):
        assert _get(app, token='p1:p1').status_int == 403


class TestShow:
    def test_own_project(self, app, servers):
        resp = _get(app, '/p1', token='p1:p1')
        assert resp.status_int == 200, resp.body
        usage = resp.json['tenant_usage']
        assert usage['total_hours'] == pytest.approx(13.5)
        assert len(usage['server_usages']) == 2

    def test_other_project_forbidden_and_empty_project(self, app, servers):
        assert _get(app, '/p2', token='p1:p1').status_int == 403
        assert _get(app, '/nobody').json == {'tenant_usage': {}}

    def test_links_from_2_40(self, app, servers):
        page = _get(app, '/p1', query=WINDOW + '&limit=1', version='2.40').json
        assert len(page['tenant_usage']['server_usages']) == 1
        assert '/os-simple-tenant-usage/p1?' in page['tenant_usage_links'][0]['href']


def test_hours_use_nova_arithmetic():
    class Server:
        launched_at = _at(1, 0)
        terminated_at = None
    stop = _at(1, 1) + datetime.timedelta(microseconds=360000)
    # 3600 s + 0.36 s read as 3.6 s, as Nova reads it.
    assert stu.hours_for(Server, _at(0, 0), stop) == pytest.approx((3600 + 3.6) / 3600)
    assert stu.hours_for(Server, _at(1, 2), _at(1, 3)) == 1
    Server.terminated_at = _at(0, 23)
    assert stu.hours_for(Server, _at(1, 0), _at(1, 3)) == 0
