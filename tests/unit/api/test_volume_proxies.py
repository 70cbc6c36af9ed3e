"""The os-volumes and os-snapshots proxies (to 2.35) over the Cinder test double: every
route, Nova's views, the 2.36 cut-off, the policies, Cinder's errors and no Cinder."""
from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
import webob

from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import routes, servers
from novalite.conf import CONF
from novalite.volume import client
from tests.unit.api.conftest import call
from tests.unit.volume.cinder_double import CinderDouble

OLD = '2.35'
GONE = '2.36'
MISSING = '7f1b0f7e-0000-4000-8000-000000000000'
SERVER = '0b9d2f52-6d0f-4d6a-9a59-3c0b5a0e0c11'
CREATED = '2026-11-26T07:00:00.000000'


@pytest.fixture
def cinder(monkeypatch: pytest.MonkeyPatch) -> Iterator[CinderDouble]:
    """A keystone-less Cinder double at ``[cinder] endpoint_template``."""
    double = CinderDouble().start()
    monkeypatch.setattr(client, 'RETRY_DELAY', 0.001)
    CONF.set_override('endpoint_template', double.url + '/v3', group='cinder')
    client.reset()
    try:
        yield double
    finally:
        double.stop()
        for name in ('endpoint_template', 'http_retries'):
            CONF.clear_override(name, group='cinder')
        CONF.clear_override('max_limit', group='api')
        client.reset()


@pytest.fixture
def router(api_db: str) -> routes.APIRouterV21:
    return routes.APIRouterV21()


@pytest.fixture
def app(router: routes.APIRouterV21) -> Any:
    """noauth2: every user a member (and reader) of its project."""
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


@pytest.fixture
def keystone_app(router: routes.APIRouterV21) -> Any:
    """The context from auth_token's headers, so a test chooses the roles."""
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.KeystoneContext(router))})


def _get(app: Any, path: str, version: str = OLD) -> webob.Response:
    return call(app, 'GET', '/v2.1' + path, version=version)


def _attached(cinder: CinderDouble, device: str | None = '/dev/vdb') -> dict[str, Any]:
    volume = cinder.add_volume(size=2, status='in-use', name='data', description='db',
                               created_at=CREATED, volume_type='ceph',
                               metadata={'purpose': 'db'})
    volume['attachments'] = [{'id': 'a1', 'attachment_id': 'a1', 'server_id': SERVER,
                              'volume_id': volume['id'], 'device': device}]
    return volume


class TestVolumeViews:
    def test_an_attached_volume(self, app, cinder):
        volume = _attached(cinder)
        expected = {'id': volume['id'], 'status': 'in-use', 'size': 2,
                    'availabilityZone': 'nova', 'createdAt': CREATED,
                    'attachments': [{'id': volume['id'], 'volumeId': volume['id'],
                                     'serverId': SERVER, 'device': '/dev/vdb'}],
                    'displayName': 'data', 'displayDescription': 'db',
                    'volumeType': 'ceph', 'snapshotId': None,
                    'metadata': {'purpose': 'db'}}
        assert _get(app, '/os-volumes/%s' % volume['id']).json == {'volume': expected}
        assert _get(app, '/os-volumes').json == {'volumes': [expected]}
        assert _get(app, '/os-volumes/detail').json == {'volumes': [expected]}

    def test_a_volume_with_no_attachment_shows_one_empty(self, app, cinder):
        volume = cinder.add_volume(created_at=CREATED)
        view = _get(app, '/os-volumes/%s' % volume['id']).json['volume']
        assert view['attachments'] == [{}]
        assert (view['displayName'], view['metadata'], view['volumeType']) == \
            (None, {}, '__DEFAULT__')

    def test_an_attachment_without_a_device_has_no_device_key(self, app, cinder):
        volume = _attached(cinder, device=None)
        view = _get(app, '/os-volumes/%s' % volume['id']).json['volume']
        assert view['attachments'] == [{'id': volume['id'], 'volumeId': volume['id'],
                                        'serverId': SERVER}]

    def test_the_caller_is_who_cinder_sees(self, app, cinder):
        call(app, 'GET', '/v2.1/os-volumes', token='alice:alpha', version=OLD)
        assert cinder.requests()[-1].headers['X-Auth-Token'] == 'alice:alpha'


class TestVolumeLists:
    @pytest.fixture
    def three(self, cinder):
        return [cinder.add_volume(name='v%d' % i)['id'] for i in range(3)]

    @pytest.mark.parametrize('query,names', [
        ('', ['v0', 'v1', 'v2']), ('?limit=2', ['v0', 'v1']), ('?offset=2', ['v2']),
        ('?offset=1&limit=1', ['v1']), ('?limit=0', ['v0', 'v1', 'v2']),
        ('?unknown=1', ['v0', 'v1', 'v2'])])
    def test_limit_and_offset(self, app, three, query, names):
        for path in ('/os-volumes', '/os-volumes/detail'):
            resp = _get(app, path + query)
            assert [v['displayName'] for v in resp.json['volumes']] == names

    def test_max_limit_caps_the_list(self, app, three):
        CONF.set_override('max_limit', 2, group='api')
        assert len(_get(app, '/os-volumes?limit=3').json['volumes']) == 2
        assert len(_get(app, '/os-volumes').json['volumes']) == 2

    @pytest.mark.parametrize('query', ['?limit=-1', '?offset=x', '?limit=' + '9' * 5000,
                                       '?offset=' + '9' * 5000])
    def test_a_bad_limit_or_offset_is_400(self, app, three, query):
        assert _get(app, '/os-volumes' + query).status_int == 400


class TestVolumeCreate:
    def test_create_with_novas_body(self, app, cinder):
        body = {'volume': {'size': '2', 'display_name': 'data', 'display_description': 'db',
                           'volume_type': 'ceph', 'availability_zone': 'nova',
                           'metadata': {'purpose': 'db'}}}
        resp = call(app, 'POST', '/v2.1/os-volumes', body, version=OLD)
        assert resp.status_int == 200, resp.body
        volume = resp.json['volume']
        assert resp.headers['Location'] == 'http://localhost/v2.1/os-volumes/%s' % volume['id']
        assert (volume['status'], volume['size'], volume['displayName'],
                volume['displayDescription'], volume['volumeType'], volume['metadata'],
                volume['attachments'], volume['snapshotId']) == \
            ('creating', 2, 'data', 'db', 'ceph', {'purpose': 'db'}, [{}], None)
        sent = cinder.requests('POST')[-1].body['volume']
        assert (sent['size'], sent['name'], sent['description'], sent['volume_type'],
                sent['availability_zone'], sent['metadata']) == \
            (2, 'data', 'db', 'ceph', 'nova', {'purpose': 'db'})
        assert _get(app, '/os-volumes/%s' % volume['id']).json['volume']['status'] == \
            'available'

    def test_create_from_a_snapshot(self, app, cinder):
        snapshot = cinder.add_snapshot(cinder.add_volume(size=3)['id'])
        body = {'volume': {'size': 3, 'snapshot_id': snapshot['id']}}
        resp = call(app, 'POST', '/v2.1/os-volumes', body, version=OLD)
        assert resp.status_int == 200, resp.body
        assert resp.json['volume']['snapshotId'] == snapshot['id']
        assert cinder.requests('POST')[-1].body['volume']['snapshot_id'] == snapshot['id']

    def test_from_a_missing_snapshot_is_404_and_nothing_is_created(self, app, cinder):
        body = {'volume': {'size': 1, 'snapshot_id': MISSING}}
        resp = call(app, 'POST', '/v2.1/os-volumes', body, version=OLD)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == \
            'Snapshot %s could not be found.' % MISSING
        assert cinder.requests('POST') == []

    def test_from_a_snapshot_id_cinder_cannot_have_is_404(self, app, cinder):
        body = {'volume': {'size': 1, 'snapshot_id': '../volumes/detail'}}
        resp = call(app, 'POST', '/v2.1/os-volumes', body, version=OLD)
        assert resp.status_int == 404
        assert cinder.requests() == []

    @pytest.mark.parametrize('volume', [
        {}, {'size': 0}, {'size': '1.5'}, {'size': '9' * 5000}, {'size': 1, 'name': 'x'},
        {'size': 1, 'display_name': 5}, {'size': 1, 'metadata': 'x'}])
    def test_a_body_nova_refuses_is_400(self, app, cinder, volume):
        resp = call(app, 'POST', '/v2.1/os-volumes', {'volume': volume}, version=OLD)
        assert resp.status_int == 400
        assert cinder.requests('POST') == []

    def test_over_quota_is_403(self, app, cinder):
        cinder.volume_quota = 0
        resp = call(app, 'POST', '/v2.1/os-volumes', {'volume': {'size': 1}}, version=OLD)
        assert resp.status_int == 403
        assert 'quota' in resp.json['forbidden']['message']

    def test_cinders_refusal_is_400_with_its_message(self, app, cinder):
        cinder.fail_next(400, 'Invalid input received: Availability zone is invalid.')
        resp = call(app, 'POST', '/v2.1/os-volumes', {'volume': {'size': 1}}, version=OLD)
        assert resp.status_int == 400
        assert 'Availability zone is invalid' in resp.json['badRequest']['message']

    def test_an_unknown_volume_type_is_404(self, app, cinder):
        cinder.fail_next(404, 'Volume type with name gold could not be found.')
        body = {'volume': {'size': 1, 'volume_type': 'gold'}}
        resp = call(app, 'POST', '/v2.1/os-volumes', body, version=OLD)
        assert resp.status_int == 404
        assert 'gold' in resp.json['itemNotFound']['message']


class TestVolumeDelete:
    def test_delete(self, app, cinder):
        volume = cinder.add_volume()
        path = '/v2.1/os-volumes/%s' % volume['id']
        resp = call(app, 'DELETE', path, version=OLD)
        assert resp.status_int == 202 and resp.body == b''
        assert volume['id'] not in cinder.volumes
        assert call(app, 'DELETE', path, version=OLD).status_int == 404

    def test_an_attached_volume_is_400(self, app, cinder):
        volume = _attached(cinder)
        resp = call(app, 'DELETE', '/v2.1/os-volumes/%s' % volume['id'], version=OLD)
        assert resp.status_int == 400
        assert 'must be available' in resp.json['badRequest']['message']
        assert volume['id'] in cinder.volumes

    @pytest.mark.parametrize('method,path', [
        ('GET', '/os-volumes/..'), ('GET', '/os-volumes/x%3Fall_tenants=1'),
        ('DELETE', '/os-volumes/not-a-uuid'), ('GET', '/os-snapshots/..'),
        ('DELETE', '/os-snapshots/x%23y')])
    def test_an_id_cinder_cannot_have_is_404_without_asking_it(self, app, cinder, method,
                                                               path):
        resp = call(app, method, '/v2.1' + path, version=OLD)
        assert resp.status_int == 404
        noun = 'Volume' if 'volumes' in path else 'Snapshot'
        assert resp.json['itemNotFound']['message'] == '%s %s could not be found.' % (
            noun, urllib.parse.unquote(path.rsplit('/', 1)[1]))
        assert cinder.requests() == []

    def test_show_of_a_missing_volume_is_404(self, app, cinder):
        resp = _get(app, '/os-volumes/%s' % MISSING)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == 'Volume %s could not be found.' % MISSING


class TestSnapshots:
    def test_views_and_lists(self, app, cinder):
        volume = cinder.add_volume(size=4)
        snapshot = cinder.add_snapshot(volume['id'])
        snapshot.update(name='nightly', description='before upgrade', created_at=CREATED)
        expected = {'id': snapshot['id'], 'volumeId': volume['id'], 'status': 'available',
                    'size': 4, 'createdAt': CREATED, 'displayName': 'nightly',
                    'displayDescription': 'before upgrade'}
        assert _get(app, '/os-snapshots/%s' % snapshot['id']).json == {'snapshot': expected}
        assert _get(app, '/os-snapshots').json == {'snapshots': [expected]}
        assert _get(app, '/os-snapshots/detail').json == {'snapshots': [expected]}
        cinder.add_snapshot(volume['id'])
        assert len(_get(app, '/os-snapshots?limit=1').json['snapshots']) == 1
        assert len(_get(app, '/os-snapshots/detail?offset=1').json['snapshots']) == 1

    def test_create(self, app, cinder):
        volume = cinder.add_volume(size=2)
        body = {'snapshot': {'volume_id': volume['id'], 'display_name': 'nightly',
                             'display_description': 'before upgrade'}}
        resp = call(app, 'POST', '/v2.1/os-snapshots', body, version=OLD)
        assert resp.status_int == 200, resp.body
        snapshot = resp.json['snapshot']
        assert (snapshot['volumeId'], snapshot['size'], snapshot['displayName'],
                snapshot['displayDescription']) == (volume['id'], 2, 'nightly',
                                                    'before upgrade')
        sent = cinder.requests('POST')[-1].body['snapshot']
        assert (sent['name'], sent['description'], sent['force']) == \
            ('nightly', 'before upgrade', False)

    def test_an_attached_volume_needs_force(self, app, cinder):
        volume = _attached(cinder)
        body = {'snapshot': {'volume_id': volume['id']}}
        resp = call(app, 'POST', '/v2.1/os-snapshots', body, version=OLD)
        assert resp.status_int == 400
        assert 'in-use' in resp.json['badRequest']['message']
        body['snapshot']['force'] = 'True'
        resp = call(app, 'POST', '/v2.1/os-snapshots', body, version=OLD)
        assert resp.status_int == 200, resp.body
        assert cinder.requests('POST')[-1].body['snapshot']['force'] is True

    @pytest.mark.parametrize('snapshot', [
        {}, {'volume_id': MISSING, 'force': 'maybe'}, {'volume_id': MISSING, 'name': 'x'}])
    def test_a_body_nova_refuses_is_400(self, app, cinder, snapshot):
        resp = call(app, 'POST', '/v2.1/os-snapshots', {'snapshot': snapshot}, version=OLD)
        assert resp.status_int == 400
        assert cinder.requests('POST') == []

    def test_of_a_missing_volume_is_404(self, app, cinder):
        body = {'snapshot': {'volume_id': MISSING}}
        resp = call(app, 'POST', '/v2.1/os-snapshots', body, version=OLD)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == 'Volume %s could not be found.' % MISSING

    def test_over_quota_is_403(self, app, cinder):
        volume = cinder.add_volume()
        cinder.fail_next(413, "SnapshotLimitExceeded: Maximum number of snapshots allowed "
                              "(0) exceeded for quota 'snapshots'.")
        body = {'snapshot': {'volume_id': volume['id']}}
        assert call(app, 'POST', '/v2.1/os-snapshots', body, version=OLD).status_int == 403

    def test_delete(self, app, cinder):
        snapshot = cinder.add_snapshot(cinder.add_volume()['id'])
        path = '/v2.1/os-snapshots/%s' % snapshot['id']
        resp = call(app, 'DELETE', path, version=OLD)
        assert resp.status_int == 202 and resp.body == b''
        assert snapshot['id'] not in cinder.snapshots
        assert call(app, 'DELETE', path, version=OLD).status_int == 404
        resp = _get(app, '/os-snapshots/%s' % snapshot['id'])
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == \
            'Snapshot %s could not be found.' % snapshot['id']


ROUTES = [('GET', '/os-volumes'), ('GET', '/os-volumes/detail'), ('POST', '/os-volumes'),
          ('GET', '/os-volumes/%s' % MISSING), ('DELETE', '/os-volumes/%s' % MISSING),
          ('GET', '/os-snapshots'), ('GET', '/os-snapshots/detail'),
          ('POST', '/os-snapshots'), ('GET', '/os-snapshots/%s' % MISSING),
          ('DELETE', '/os-snapshots/%s' % MISSING)]
_BODIES = {'/os-volumes': {'volume': {'size': 1}},
           '/os-snapshots': {'snapshot': {'volume_id': MISSING}}}


def _send(app: Any, method: str, path: str, version: str = OLD, **kwargs: Any
          ) -> webob.Response:
    return call(app, method, '/v2.1' + path, _BODIES.get(path) if method == 'POST' else None,
                version=version, **kwargs)


class TestMicroversions:
    @pytest.mark.parametrize('method,path', ROUTES)
    def test_gone_from_236(self, app, cinder, method, path):
        resp = _send(app, method, path, version=GONE)
        assert resp.status_int == 404
        assert cinder.requests() == []

    @pytest.mark.parametrize('method,path', ROUTES)
    def test_served_at_21_and_235(self, app, cinder, method, path):
        for version in ('2.1', OLD):
            resp = _send(app, method, path, version=version)
            # The missing ids and volume are Cinder's answer (404), not the router's.
            assert resp.status_int in (200, 404), resp.body
            assert cinder.requests(), (version, method, path)
            cinder.seen.clear()


class TestPolicy:
    READER = {'X-User-Id': 'r', 'X-Project-Id': 'demo', 'X-Roles': 'reader'}

    @pytest.mark.parametrize('method,path', [r for r in ROUTES if r[0] == 'GET'])
    def test_a_reader_reads(self, keystone_app, cinder, method, path):
        resp = _send(keystone_app, method, path, token=None, headers=self.READER)
        assert resp.status_int in (200, 404), resp.body  # 404: Cinder's, for MISSING

    @pytest.mark.parametrize('method,path', [r for r in ROUTES if r[0] != 'GET'])
    def test_only_a_member_changes(self, keystone_app, cinder, method, path):
        resp = _send(keystone_app, method, path, token=None, headers=self.READER)
        assert resp.status_int == 403
        assert 'os_compute_api:os-volumes:' in resp.json['forbidden']['message']
        assert cinder.requests() == []
        member = dict(self.READER, **{'X-Roles': 'member,reader'})
        assert _send(keystone_app, method, path, token=None,
                     headers=member).status_int != 403

    def test_a_user_without_a_role_of_the_project_reads_nothing(self, keystone_app, cinder):
        headers = dict(self.READER, **{'X-Roles': ''})
        resp = _send(keystone_app, 'GET', '/os-volumes', token=None, headers=headers)
        assert resp.status_int == 403


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that nothing listens on (bound, never listening)."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


class TestCinderErrors:
    @pytest.mark.parametrize('method,path', ROUTES)
    def test_cinder_unreachable_is_503(self, app, cinder, closed_port, method, path):
        CONF.set_override('http_retries', 0, group='cinder')
        CONF.set_override('endpoint_template', 'http://127.0.0.1:%d/v3' % closed_port,
                          group='cinder')
        client.reset()
        resp = _send(app, method, path)
        assert resp.status_int == 503, resp.body
        assert 'Could not reach the volume service (Cinder)' in \
            resp.json['serviceUnavailable']['message']

    def test_a_cinder_failure_is_500_without_its_text(self, app, cinder):
        cinder.fail_next(500, 'secret internals')
        resp = _get(app, '/os-volumes')
        assert resp.status_int == 500
        assert 'secret' not in resp.text


class TestWithoutCinder:
    @pytest.fixture(autouse=True)
    def _no_cinder(self):
        CONF.clear_override('endpoint_template', group='cinder')
        client.reset()

    @pytest.mark.parametrize('path,key', [('/os-volumes', 'volumes'),
                                          ('/os-volumes/detail', 'volumes'),
                                          ('/os-snapshots', 'snapshots'),
                                          ('/os-snapshots/detail', 'snapshots')])
    def test_lists_are_empty(self, app, path, key):
        assert _get(app, path).json == {key: []}

    @pytest.mark.parametrize('method,path', [r for r in ROUTES if '/%s' % MISSING in r[1]])
    def test_an_id_is_not_found(self, app, method, path):
        resp = _send(app, method, path)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'].endswith(
            ' %s could not be found.' % MISSING)

    @pytest.mark.parametrize('path', ['/os-volumes', '/os-snapshots'])
    def test_create_says_there_is_no_cinder(self, app, path):
        resp = _send(app, 'POST', path)
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == servers.NO_CINDER
