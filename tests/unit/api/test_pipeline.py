"""Tests of the whole paste pipeline from api-paste.ini: versions, auth, routing."""
from __future__ import annotations

import pytest
import webob

from novalite.api.openstack import auth, loader, wsgi
from novalite.conf import CONF
from tests.unit.api.conftest import call, make_flavor


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def test_paste_config_is_found_at_the_top_of_the_tree():
    path = loader.find_paste_config()
    assert path.endswith('/api-paste.ini')


def test_absolute_paste_config_must_exist(tmp_path):
    CONF.set_override('api_paste_config', str(tmp_path / 'nope.ini'), group='api')
    try:
        with pytest.raises(RuntimeError, match='nope.ini'):
            loader.find_paste_config()
    finally:
        CONF.clear_override('api_paste_config', group='api')


def test_root_lists_versions_without_auth(app):
    resp = call(app, 'GET', '/', token=None)
    assert resp.status_int == 200
    versions = {v['id']: v for v in resp.json['versions']}
    assert versions['v2.0']['status'] == 'DEPRECATED'
    assert versions['v2.1'] == {
        'id': 'v2.1', 'status': 'CURRENT', 'version': '2.104', 'min_version': '2.1',
        'updated': '2013-07-23T11:33:21Z',
        'links': [{'rel': 'self', 'href': 'http://localhost/v2.1/'}]}


@pytest.mark.parametrize('path', ['/v2.1', '/v2.1/'])
def test_v21_document_without_auth(app, path):
    resp = call(app, 'GET', path, token=None)
    assert resp.status_int == 200
    assert resp.json['version']['id'] == 'v2.1'
    assert resp.json['version']['links'][0]['href'] == 'http://localhost/v2.1/'


def test_missing_token_is_401(app):
    resp = call(app, 'GET', '/v2.1/flavors', token=None)
    assert resp.status_int == 401
    assert resp.json['unauthorized']['code'] == 401


def test_request_id_headers_and_version_headers(app):
    resp = call(app, 'GET', '/v2.1/flavors', version='2.61')
    assert resp.status_int == 200
    assert resp.headers['X-Openstack-Request-Id'].startswith('req-')
    assert resp.headers['X-Compute-Request-Id'] == resp.headers['X-Openstack-Request-Id']
    assert resp.headers['OpenStack-API-Version'] == 'compute 2.61'


def test_bad_microversion_through_pipeline(app):
    assert call(app, 'GET', '/v2.1/flavors', version='2.1000').status_int == 406
    resp = call(app, 'GET', '/v2.1/flavors',
                headers={'X-OpenStack-Nova-API-Version': 'two'})
    assert resp.status_int == 400


def test_project_id_in_url_is_optional_but_must_match(app):
    make_flavor()
    plain = call(app, 'GET', '/v2.1/flavors', token='demo:dead-beef')
    with_project = call(app, 'GET', '/v2.1/dead-beef/flavors', token='demo:dead-beef')
    assert plain.status_int == with_project.status_int == 200
    assert with_project.json['flavors'][0]['links'][0]['href'] == \
        'http://localhost/v2.1/dead-beef/flavors/1'
    assert plain.json['flavors'][0]['links'][1]['href'] == 'http://localhost/flavors/1'
    resp = call(app, 'GET', '/v2.1/abc123/flavors', token='demo:dead-beef')
    assert resp.status_int == 400
    assert "project_id 'abc123'" in resp.json['badRequest']['message']


def test_a_project_id_in_the_url_is_hex_as_in_novas_mapper(app):
    # "demo" is no project id for Nova's router: the path is not found.
    assert call(app, 'GET', '/v2.1/demo/flavors', token='demo:demo').status_int == 404


@pytest.mark.parametrize('path', ['/v2.1/flavors/', '/v2.1/servers/',
                                  '/v2.1/os-simple-tenant-usage/', '/v2.1/servers/detail/'])
def test_a_trailing_slash_is_another_path(app, path):
    make_flavor()
    resp = call(app, 'GET', path)
    assert resp.status_int == 404
    assert 'itemNotFound' in resp.json


def test_unknown_path_and_wrong_method_are_404(app):
    resp = call(app, 'GET', '/v2.1/nothing/here/at/all')
    assert resp.status_int == 404
    assert 'itemNotFound' in resp.json
    resp = call(app, 'POST', '/v2.1/flavors/1', body={})
    assert resp.status_int == 404


def test_oversized_body_is_rejected_before_auth(app):
    resp = call(app, 'POST', '/v2.1/flavors', body=b'{' + b' ' * 200000 + b'}',
                token=None)
    assert resp.status_int == 413


def test_keystone_strategy_loads_authtoken(api_db):
    # The keystone pipeline must build (authtoken is only contacted per request).
    CONF.set_override('auth_strategy', 'keystone', group='api')
    try:
        app = loader.load_app()
        assert app is not None
    finally:
        CONF.clear_override('auth_strategy', group='api')


class TestNoAuth:
    def _context(self, token):
        seen = {}

        @webob.dec.wsgify
        def inner(req):
            seen['ctx'] = req.environ[wsgi.CONTEXT_KEY]
            return webob.Response()
        req = webob.Request.blank('/', headers={'X-Auth-Token': token})
        assert req.get_response(auth.NoAuthMiddleware(inner)).status_int == 200
        return seen['ctx']

    def test_user_and_project(self):
        ctx = self._context('alice:proj1')
        assert (ctx.user_id, ctx.project_id, ctx.is_admin) == ('alice', 'proj1', False)
        assert 'admin' not in ctx.roles

    def test_token_without_colon_is_user_and_project(self):
        ctx = self._context('bob')
        assert (ctx.user_id, ctx.project_id) == ('bob', 'bob')

    def test_admin_user_gets_admin_role(self):
        ctx = self._context('admin:proj1')
        assert ctx.is_admin
        assert 'admin' in ctx.roles


class TestKeystoneContext:
    def _run(self, headers):
        seen = {}

        @webob.dec.wsgify
        def inner(req):
            seen['ctx'] = req.environ[wsgi.CONTEXT_KEY]
            return webob.Response()
        req = webob.Request.blank('/', headers=headers)
        return req.get_response(auth.KeystoneContext(inner)), seen.get('ctx')

    def test_context_from_authtoken_headers(self):
        resp, ctx = self._run({'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
                               'X-Project-Id': 'p1', 'X-Roles': 'reader,admin',
                               'X-Auth-Token': 'tok',
                               'X-Service-Catalog': '[{"type": "image"}]'})
        assert resp.status_int == 200
        assert (ctx.user_id, ctx.project_id, ctx.auth_token) == ('u1', 'p1', 'tok')
        assert ctx.is_admin
        assert ctx.service_catalog == [{'type': 'image'}]

    def test_unconfirmed_identity_is_401(self):
        resp, ctx = self._run({'X-Identity-Status': 'Invalid', 'X-User-Id': 'u1'})
        assert resp.status_int == 401
        assert ctx is None

    def test_missing_user_is_401(self):
        resp, ctx = self._run({'X-Project-Id': 'p1'})
        assert resp.status_int == 401
