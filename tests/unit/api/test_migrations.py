"""Tests of os-migrations and servers/{id}/migrations against real SQLite cell databases."""
from __future__ import annotations

import datetime

import pytest

from novalite import context as nl_context
from novalite import objects, policy
from novalite.api.openstack import loader
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call

T0 = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=datetime.UTC)


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def add_migration(cloud: Cloud, cell: str, minutes: int, **values) -> objects.Migration:
    """A migration created ``minutes`` after T0 (and updated at the same time)."""
    fields = dict(source_compute='cmp1', source_node='cmp1.local', dest_compute='cmp2',
                  dest_node='cmp2.local', dest_host='192.0.2.2', status='finished',
                  migration_type='resize', instance_uuid=None, old_instance_type_id=1,
                  new_instance_type_id=2, hidden=False, user_id='demo', project_id='demo')
    fields.update(values)
    stamp = T0 + datetime.timedelta(minutes=minutes)
    with nl_context.target_cell(cloud.context, cloud.cells[cell]) as cctxt:
        migration = objects.Migration(cctxt, created_at=stamp, updated_at=stamp, **fields)
        migration.create()
    return migration


@pytest.fixture
def moves(cloud):
    """Four migrations over two cells, oldest first; one hidden, one live in progress."""
    server = cloud.add_instance('cmp1')
    return {
        'resize': add_migration(cloud, 'cell1', 1, instance_uuid=server),
        'cold': add_migration(cloud, 'cell2', 2, migration_type='migration',
                              status='confirmed', source_compute='cmp3',
                              dest_compute='cmp1', user_id='alice', project_id='proj-a'),
        'hidden': add_migration(cloud, 'cell1', 3, hidden=True),
        'live': add_migration(cloud, 'cell1', 4, migration_type='live-migration',
                              status='running', instance_uuid=server),
        'server': server,
    }


_NAMES = {'2024-05-01T12:0%d:00.000000' % minute: name
          for minute, name in ((1, 'resize'), (2, 'cold'), (3, 'hidden'), (4, 'live'))}


def _list(app, query='', version=None, token=ADMIN):
    return call(app, 'GET', '/v2.1/os-migrations' + query, token=token, version=version)


class TestList:
    def test_every_cell_without_hidden_ones_in_the_2_1_format(self, app, moves):
        resp = _list(app)
        assert resp.status_int == 200
        listed = resp.json['migrations']
        assert sorted(m['id'] for m in listed) == sorted(
            moves[k].id for k in ('resize', 'cold', 'live'))
        resize = next(m for m in listed if m['status'] == 'finished')
        assert resize == {
            'id': moves['resize'].id, 'source_node': 'cmp1.local', 'dest_node': 'cmp2.local',
            'source_compute': 'cmp1', 'dest_compute': 'cmp2', 'dest_host': '192.0.2.2',
            'status': 'finished', 'instance_uuid': moves['server'],
            'old_instance_type_id': 1, 'new_instance_type_id': 2,
            'created_at': '2024-05-01T12:01:00.000000',
            'updated_at': '2024-05-01T12:01:00.000000'}
        assert 'migrations_links' not in resp.json

    def test_fields_and_links_per_microversion(self, app, moves):
        v223 = {m['status']: m for m in _list(app, version='2.23').json['migrations']}
        assert v223['finished']['migration_type'] == 'resize'
        assert 'links' not in v223['finished'] and 'uuid' not in v223['finished']
        live = v223['running']
        assert live['links'][0]['href'].endswith(
            '/v2.1/servers/%s/migrations/%s' % (moves['server'], moves['live'].id))
        v259 = _list(app, version='2.59').json['migrations']
        assert 'uuid' in v259[0] and 'user_id' not in v259[0]
        v280 = _list(app, version='2.80').json['migrations']
        assert {(m['user_id'], m['project_id']) for m in v280} == {
            ('demo', 'demo'), ('alice', 'proj-a')}

    def test_filters(self, app, moves):
        def names(query, version=None):
            # Ids repeat across cells: name each migration by its creation minute.
            return {_NAMES[m['created_at']]
                    for m in _list(app, query, version).json['migrations']}
        assert names('?host=cmp3') == {'cold'}
        assert names('?host=cmp1') == {'resize', 'cold', 'live'}
        assert names('?source_compute=cmp1') == {'resize', 'live'}
        assert names('?status=running') == {'live'}
        assert names('?migration_type=migration') == {'cold'}
        assert names('?instance_uuid=%s' % moves['server']) == {'resize', 'live'}
        assert names('?hidden=1') == set()
        assert names('?user_id=alice', '2.80') == {'cold'}
        assert names('?project_id=demo', '2.80') == {'resize', 'live'}
        # Unknown filters are ignored until 2.59, refused after.
        assert names('?user_id=alice&foo=1', '2.58') == {'resize', 'cold', 'live'}
        assert _list(app, '?foo=1', '2.59').status_int == 400
        assert _list(app, '?user_id=alice', '2.79').status_int == 400

    def test_newest_first_paging_across_cells_from_2_59(self, app, moves):
        page = _list(app, '?limit=2', '2.59').json
        assert [m['id'] for m in page['migrations']] == [moves['live'].id, moves['cold'].id]
        next_href = page['migrations_links'][0]['href']
        assert 'marker=%s' % moves['cold'].uuid in next_href
        rest = _list(app, '?marker=%s' % moves['cold'].uuid, '2.59').json
        assert [m['id'] for m in rest['migrations']] == [moves['resize'].id]
        assert 'migrations_links' not in rest
        assert _list(app, '?marker=%s' % ('1' * 32), '2.59').status_int == 400
        assert _list(app, '?limit=-1', '2.59').status_int == 400
        assert _list(app, '?limit=0', '2.59').json['migrations'] == []

    def test_changes_since_and_before(self, app, moves):
        since = '?changes-since=2024-05-01T12:02:00Z'
        found = _list(app, since, '2.59').json['migrations']
        assert [m['id'] for m in found] == [moves['live'].id, moves['cold'].id]
        # Ignored before 2.59; changes-before from 2.66.
        assert len(_list(app, since, '2.58').json['migrations']) == 3
        both = since + '&changes-before=2024-05-01T12:03:00Z'
        assert _list(app, both, '2.65').status_int == 400
        assert [m['id'] for m in _list(app, both, '2.66').json['migrations']] == [
            moves['cold'].id]
        reversed_window = '?changes-since=2024-05-01T13:00:00Z' \
                          '&changes-before=2024-05-01T12:00:00Z'
        assert _list(app, reversed_window, '2.66').status_int == 400
        assert _list(app, '?changes-since=yesterday', '2.59').status_int == 400

    def test_admin_only(self, app, moves):
        assert _list(app, token='demo:demo').status_int == 403


class TestServerMigrations:
    def _get(self, app, server, suffix='', version='2.23', token=ADMIN):
        return call(app, 'GET', '/v2.1/servers/%s/migrations%s' % (server, suffix),
                    token=token, version=version)

    def test_index_lists_only_live_migrations_in_progress(self, app, moves):
        found = self._get(app, moves['server']).json['migrations']
        assert [m['id'] for m in found] == [moves['live'].id]
        assert found[0]['server_uuid'] == moves['server']
        assert found[0]['memory_total_bytes'] is None
        assert 'uuid' not in found[0]
        assert 'uuid' in self._get(app, moves['server'], version='2.59').json[
            'migrations'][0]

    def test_show(self, app, moves):
        server = moves['server']
        shown = self._get(app, server, '/%s' % moves['live'].id, version='2.80').json
        assert shown['migration']['status'] == 'running'
        assert shown['migration']['user_id'] == 'demo'
        resize = self._get(app, server, '/%s' % moves['resize'].id)
        assert resize.status_int == 404
        assert 'is not live-migration' in resize.json['itemNotFound']['message']
        assert self._get(app, server, '/%s' % moves['cold'].id).status_int == 404
        assert self._get(app, server, '/424242').status_int == 404
        assert self._get(app, server, '/abc').status_int == 404

    def test_versions_policy_and_unknown_server(self, app, moves):
        assert self._get(app, moves['server'], version='2.22').status_int == 404
        assert self._get(app, moves['server'], token='demo:demo').status_int == 403
        assert self._get(app, '1' * 32).status_int == 404


class TestProjectManager:
    """Nova 34 lets a project's manager list the project's migrations, without hosts.
    noauth2 gives no manager role, so here a member counts as one."""

    @pytest.fixture(autouse=True)
    def member_is_manager(self):
        policy.reset()
        policy.init(rules={'project_manager_api': 'role:member and project_id:%(project_id)s'})
        yield
        policy.reset()

    def test_own_project_only_and_without_hosts(self, app, moves):
        assert _list(app, token='demo:demo').status_int == 403
        assert _list(app, '?project_id=proj-a', '2.80', token='demo:demo').status_int == 403
        found = _list(app, '?project_id=demo', '2.80', token='demo:demo').json['migrations']
        assert sorted(m['id'] for m in found) == sorted([moves['resize'].id, moves['live'].id])
        for migration in found:
            assert migration['project_id'] == 'demo'
            for key in ('source_compute', 'source_node', 'dest_compute', 'dest_host',
                        'dest_node'):
                assert key in migration and migration[key] is None
        shown = _list(app, '?project_id=demo', '2.80').json['migrations']
        assert {m['source_compute'] for m in shown} == {'cmp1'}

    def test_a_servers_live_migrations_without_hosts(self, app, moves):
        path = '/v2.1/servers/%s/migrations' % moves['server']
        found = call(app, 'GET', path, token='demo:demo', version='2.23').json['migrations']
        assert [m['id'] for m in found] == [moves['live'].id]
        assert found[0]['dest_compute'] is None and found[0]['source_compute'] is None
        assert call(app, 'GET', path + '/%s' % moves['live'].id, token='demo:demo',
                    version='2.23').status_int == 403
