"""Hostile input and an unavailable database, at the layers that answer them once for
every route: the URL map, the body parser, the fault mapping and the SQLite engine."""
from __future__ import annotations

import io

import pymysql
import pytest
import sqlalchemy as sa
import webob
from oslo_db import exception as db_exc

from novalite.api.openstack import faults, loader, urlmap, wsgi
from novalite.conf import CONF
from novalite.db import engine
from tests.unit.api.conftest import call, make_flavor


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def _json_app(environ, start_response):
    start_response('200 OK', [('Content-Type', 'application/json')])
    return [b'{}']


# -- the URL map: undecodable URLs and paths nothing serves ---------------------------

@pytest.mark.parametrize('path,query,message', [
    ('/v2.1/servers/\xff', '', 'The URL path is not UTF-8 encoded'),
    ('/\xed\xa0\x80', '', 'The URL path is not UTF-8 encoded'),  # a surrogate's bytes
    ('/v2.1/servers', 'name=%ff', 'Query string is not UTF-8 encoded'),
    ('/v2.1/servers', 'name=%C3%28&x=1', 'Query string is not UTF-8 encoded'),
    ('/v2.1/servers', 'name=\xff', 'Query string is not UTF-8 encoded'),
    ('/v2.1/servers/\x00', '', 'The URL holds a NUL character (%00)'),
    ('/v2.1/servers', 'name=a%00', 'The URL holds a NUL character (%00)'),
])
@pytest.mark.parametrize('method', ['GET', 'HEAD', 'POST'])
def test_url_map_answers_undecodable_urls_with_a_400(path, query, message, method):
    mapper = urlmap.URLMap({}, {'': _json_app})
    req = webob.Request.blank('/', method=method)
    req.environ['PATH_INFO'], req.environ['QUERY_STRING'] = path, query
    resp = req.get_response(mapper)
    assert resp.status_int == 400
    assert resp.content_type == 'application/json'
    if method != 'HEAD':
        assert resp.json == {'badRequest': {'code': 400, 'message': message}}


def test_url_map_passes_utf8_urls():
    mapper = urlmap.URLMap({}, {'': _json_app})
    req = webob.Request.blank('/servers/%C3%A9t%C3%A9?name=%E2%82%AC&x=%zz')
    assert req.get_response(mapper).status_int == 200


def test_url_map_answers_json_where_nothing_is_mounted():
    mapper = urlmap.URLMap({}, {'/v2.1': _json_app})
    resp = webob.Request.blank('/elsewhere').get_response(mapper)
    assert resp.status_int == 404
    assert resp.json['itemNotFound']['code'] == 404


@pytest.mark.parametrize('path', ['/%ff', '/?a=%ff', '/v2.1?a=%ff', '/v2.1/%ff',
                                  '/v2/flavors/%ff', '/v2.1/flavors?minRam=%ff'])
def test_undecodable_urls_through_the_pipeline(app, path):
    resp = call(app, 'GET', path)
    assert resp.status_int == 400
    assert resp.json['badRequest']['code'] == 400


# -- the body parser: nesting, surrogates, a body cut short ---------------------------

def _post(app, body: bytes, length: int | None = None, path='/v2.1/flavors'):
    req = webob.Request.blank(path, method='POST', headers={
        'X-Auth-Token': 'admin:admin', 'Content-Type': 'application/json'})
    req.body_file = io.BytesIO(body)
    req.environ['CONTENT_LENGTH'] = str(len(body) if length is None else length)
    return req.get_response(app)


@pytest.mark.parametrize('body', [b'[' * 1000 + b']' * 1000,
                                  b'{"a": ' * 5000 + b'1' + b'}' * 5000])
def test_deeply_nested_json_is_a_malformed_body(app, body):
    resp = _post(app, body)
    assert resp.status_int == 400
    assert resp.json['badRequest']['message'] == 'Malformed request body'


@pytest.mark.parametrize('body', [
    b'{"flavor": {"name": "a\\ud800", "ram": 1, "vcpus": 1, "disk": 1}}',
    b'{"flavor": {"name": "a", "ram": 1, "vcpus": 1, "disk": 1, "\\udfff": 1}}',
    b'{"flavor": {"name": "a", "description": "\\udc80\\ud800", "ram": 1, "vcpus": 1, '
    b'"disk": 1}}',
])
def test_lone_surrogates_are_refused_before_any_controller(app, body):
    resp = _post(app, body)
    assert resp.status_int == 400
    assert 'lone surrogate' in resp.json['badRequest']['message']
    assert call(app, 'GET', '/v2.1/flavors', token='admin:admin').json['flavors'] == []


@pytest.mark.parametrize('body', [
    b'{"flavor": {"name": "a\\u0000", "ram": 1, "vcpus": 1, "disk": 1}}',
    b'{"flavor": {"name": "\xc3\xa9\\u0000", "ram": 1, "vcpus": 1, "disk": 1}}',
    b'{"flavor": {"name": "a", "ram": 1, "vcpus": 1, "disk": 1, "\\u0000": [1]}}',
])
def test_nul_characters_are_refused_before_any_controller(app, body):
    resp = _post(app, body)
    assert resp.status_int == 400
    assert resp.json['badRequest']['message'] == \
        'Malformed request body: a string holds a NUL character (\\u0000)'
    assert call(app, 'GET', '/v2.1/flavors', token='admin:admin').json['flavors'] == []


@pytest.mark.parametrize('number', [b'NaN', b'Infinity', b'-Infinity', b'1e400',
                                    b'-1.5e309'])
def test_numbers_no_column_stores_are_a_malformed_body(app, number):
    # Python's parser takes them; MariaDB refuses a statement carrying one.
    resp = _post(app, b'{"flavor": {"name": "a", "ram": 1, "vcpus": 1, "disk": 1, '
                      b'"rxtx_factor": %s}}' % number)
    assert resp.status_int == 400
    assert resp.json['badRequest']['message'] == 'Malformed request body'
    assert call(app, 'GET', '/v2.1/flavors', token='admin:admin').json['flavors'] == []


def test_finite_numbers_are_still_numbers(app):
    resp = _post(app, b'{"flavor": {"name": "a", "ram": 1, "vcpus": 1, "disk": 1, '
                      b'"rxtx_factor": 1.5e0}}')
    assert resp.status_int == 200, resp.text
    assert resp.json['flavor']['rxtx_factor'] == 1.5


def test_a_surrogate_pair_escape_is_one_valid_character(app):
    resp = _post(app, b'{"flavor": {"name": "a\\ud83d\\ude00", "ram": 1, "vcpus": 1, '
                      b'"disk": 1}}')
    assert resp.status_int == 200, resp.text
    assert resp.json['flavor']['name'] == 'a\U0001f600'


def test_a_body_shorter_than_its_content_length_is_a_400(app):
    resp = _post(app, b'{"flavor": {"na', length=400)
    assert resp.status_int == 400
    assert resp.json['badRequest']['message'] == \
        'The request body is shorter than its Content-Length.'


def test_406_is_a_compute_fault(app):
    resp = call(app, 'GET', '/v2.1/flavors', version='2.1000')
    assert resp.status_int == 406
    assert list(resp.json) == ['computeFault']


def test_413_repeats_retry_after_in_the_body_as_nova():
    resp = faults.from_exception(webob.exc.HTTPRequestEntityTooLarge(
        headers={'Retry-After': '7'}))
    assert resp.headers['Retry-After'] == '7'
    assert resp.json['overLimit'] == {'code': 413, 'message': resp.json['overLimit'][
        'message'], 'retryAfter': '7'}


# -- F5: integers past 64 bits on SQLite ----------------------------------------------

HUGE = 2 ** 63


@pytest.mark.parametrize('path', [
    '/v2.1/os-aggregates/%d' % HUGE, '/v2.1/os-aggregates/-%d' % HUGE,
    '/v2.1/os-aggregates/%d' % 10 ** 40])
def test_aggregate_ids_past_64_bits_are_404(app, path):
    for method, body in (('GET', None), ('DELETE', None),
                         ('PUT', {'aggregate': {'name': 'x'}}),
                         ('POST', {'add_host': {'host': 'h'}})):
        resp = call(app, method, path + ('/action' if method == 'POST' else ''), body,
                    token='admin:admin')
        assert resp.status_int == 404, (method, resp.text)
        assert resp.json['itemNotFound']['code'] == 404


def test_flavor_filters_past_64_bits_match_as_the_numbers_would(app):
    make_flavor('1', 'small', memory_mb=512, root_gb=1)
    for query, expected in (('minRam=%d' % HUGE, []), ('minDisk=%d' % HUGE, []),
                            ('minRam=1', ['small'])):
        resp = call(app, 'GET', '/v2.1/flavors?' + query)
        assert resp.status_int == 200, resp.text
        assert [f['name'] for f in resp.json['flavors']] == expected


def test_sqlite_compares_wide_integers_like_the_other_databases(tmp_path):
    eng = engine.get_engine('sqlite:///%s' % (tmp_path / 'wide.db'))
    with eng.begin() as conn:
        conn.exec_driver_sql('CREATE TABLE t (id INTEGER PRIMARY KEY)')
        conn.exec_driver_sql('INSERT INTO t (id) VALUES (%d)' % (HUGE - 1))
        conn.exec_driver_sql('INSERT INTO t (id) VALUES (%d)' % -HUGE)
        t = sa.table('t', sa.column('id'))

        def ids(clause):
            return sorted(conn.scalars(sa.select(t.c.id).where(clause)))
        assert ids(t.c.id == HUGE) == []
        assert ids(t.c.id >= HUGE) == []
        assert ids(t.c.id < HUGE) == [-HUGE, HUGE - 1]
        assert ids(t.c.id > -HUGE - 1) == [-HUGE, HUGE - 1]
        assert ids(t.c.id.in_([HUGE, 10 ** 30, HUGE - 1])) == [HUGE - 1]


# -- point 8: the database unavailable is a 503 with Retry-After ----------------------

def _operational(code: int, message: str) -> sa.exc.OperationalError:
    return sa.exc.OperationalError('SELECT 1', {}, pymysql.err.OperationalError(code, message))


@pytest.mark.parametrize('error', [
    _operational(1040, 'Too many connections'),
    _operational(2003, "Can't connect to MySQL server on 'db'"),
    _operational(2013, 'Lost connection to MySQL server during query'),
    sa.exc.OperationalError('SELECT 1', {}, Exception('FATAL:  sorry, too many clients '
                                                      'already')),
    sa.exc.OperationalError('SELECT 1', {}, Exception('database is locked')),
    sa.exc.TimeoutError('QueuePool limit of size 5 overflow 10 reached'),
    db_exc.DBConnectionError(Exception('connection refused')),
    db_exc.DBDeadlock(),
    db_exc.DBError(_operational(1040, 'Too many connections')),
])
def test_an_unavailable_database_is_a_503_with_retry_after(error, caplog):
    try:
        try:
            raise error
        except Exception as exc:
            raise RuntimeError('wrapped by the caller') from exc
    except RuntimeError as wrapped:
        for exc in (error, wrapped):
            resp = faults.from_exception(exc)
            assert resp.status_int == 503
            assert resp.headers['Retry-After'] == str(faults.DB_RETRY_AFTER)
            assert resp.json == {'serviceUnavailable': {
                'code': 503, 'message': faults.DB_UNAVAILABLE}}
    assert 'Traceback' not in caplog.text


@pytest.mark.parametrize('error', [
    _operational(1054, "Unknown column 'x' in 'field list'"),
    sa.exc.OperationalError('SELECT 1', {}, Exception('no such table: flavors')),
    db_exc.DBError(ValueError('x')),
    RuntimeError('database is locked'),
])
def test_other_database_errors_stay_500(error):
    resp = faults.from_exception(error)
    assert resp.status_int == 500
    assert 'Retry-After' not in resp.headers


def test_a_database_that_cannot_be_opened_answers_503_through_the_pipeline(
        app, tmp_path):
    CONF.set_override('connection', 'sqlite:///%s' % (tmp_path / 'gone' / 'api.db'),
                      group='api_database')
    engine.dispose_all()
    resp = call(app, 'GET', '/v2.1/flavors')
    assert resp.status_int == 503
    assert resp.headers['Retry-After'] == str(faults.DB_RETRY_AFTER)
    assert resp.json['serviceUnavailable']['code'] == 503


def test_parse_body_keeps_valid_json():
    req = wsgi.Request.blank('/x', method='POST', body=b'{"a": ["\\u00e9"]}')
    req.content_type = 'application/json'
    assert wsgi.Resource._parse_body(req) == {'a': ['\u00e9']}


def test_the_api_database_has_its_own_pool_settings():
    url = 'mysql+pymysql://u:p@db/novalite_api'
    CONF.set_override('connection', url, group='api_database')
    CONF.set_override('max_overflow', 7, group='api_database')
    CONF.set_override('max_pool_size', 3, group='database')
    CONF.set_override('pool_timeout', 9, group='database')
    try:
        assert engine.pool_options(url) == {'max_pool_size': 3, 'max_overflow': 7,
                                            'pool_timeout': 9,
                                            'connection_recycle_time': 3600}
        assert engine.pool_options('mysql+pymysql://u:p@db/novalite')['max_overflow'] == \
            CONF.database.max_overflow
    finally:
        for name, group in (('connection', 'api_database'), ('max_overflow', 'api_database'),
                            ('max_pool_size', 'database'), ('pool_timeout', 'database')):
            CONF.clear_override(name, group=group)
