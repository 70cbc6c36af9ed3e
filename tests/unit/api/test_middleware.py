"""The pipeline's own filters as plain WSGI: fault wrapping, the request log line, and
the per-request caches of the views."""
from __future__ import annotations

import io
import logging

import webob
import webob.dec
import webob.exc

from novalite.api import openstack
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, faults, requestlog, sizelimit
from novalite.conf import CONF


def _app(status='200 OK', body=b'{"a": 1}', headers=()):
    def app(environ, start_response):
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(body))), *headers])
        return [body]
    return app


def test_fault_wrapper_turns_an_escaped_error_into_a_json_500(caplog):
    def broken(environ, start_response):
        raise RuntimeError('secret internals')
    resp = webob.Request.blank('/x').get_response(faults.FaultWrapper(broken))
    assert resp.status_int == 500
    assert resp.json['computeFault']['code'] == 500
    assert 'secret internals' not in resp.text
    assert 'secret internals' in caplog.text


def test_fault_wrapper_replaces_headers_a_lower_layer_started():
    def half_started(environ, start_response):
        start_response('200 OK', [('X-Half', 'yes')])
        raise RuntimeError('after start_response')
    resp = webob.Request.blank('/x').get_response(faults.FaultWrapper(half_started))
    assert resp.status_int == 500
    assert 'X-Half' not in resp.headers


def test_fault_wrapper_passes_answers_through():
    resp = webob.Request.blank('/x').get_response(faults.FaultWrapper(_app()))
    assert (resp.status_int, resp.json) == (200, {'a': 1})


def test_request_log_line(caplog):
    caplog.set_level(logging.INFO, logger='novalite.api.openstack.requestlog')
    app = requestlog.RequestLog(_app('404 Not Found', b'{}', [
        ('X-OpenStack-Nova-API-Version', '2.47')]))
    req = webob.Request.blank('/v2.1/servers/x?limit=1', method='GET')
    req.environ['REMOTE_ADDR'] = '10.1.2.3'
    resp = req.get_response(app)
    assert resp.status_int == 404
    line = [r.getMessage() for r in caplog.records if 'status:' in r.getMessage()][-1]
    assert line.startswith('10.1.2.3 "GET /v2.1/servers/x?limit=1" status: 404 len: 2 '
                           'microversion: 2.47 time: ')


def test_request_log_of_an_application_that_starts_when_iterated(caplog):
    caplog.set_level(logging.INFO, logger='novalite.api.openstack.requestlog')

    def lazy(environ, start_response):
        start_response('204 No Content', [])
        yield b''
    resp = webob.Request.blank('/v2.1/x', method='DELETE').get_response(
        requestlog.RequestLog(lazy))
    assert resp.status_int == 204
    line = [r.getMessage() for r in caplog.records if 'status:' in r.getMessage()][-1]
    assert '"DELETE /v2.1/x" status: 204 len: 0 microversion: -' in line


def test_links_are_worked_out_once_per_request():
    class Builder(common.ViewBuilder):
        _collection_name = 'servers'
    req = webob.Request.blank('/v2.1/proj/servers/detail')
    req.environ['SCRIPT_NAME'] = '/v2.1'
    req.environ['PATH_INFO'] = '/proj/servers/detail'
    req.environ['novalite.context'] = type('Ctx', (), {'project_id': 'proj'})()
    links = Builder()._get_links(req, 'abc')
    assert links == [{'rel': 'self', 'href': 'http://localhost/v2.1/proj/servers/abc'},
                     {'rel': 'bookmark', 'href': 'http://localhost/proj/servers/abc'}]
    assert req.environ['novalite.link_prefixes'] == {False: 'http://localhost/v2.1/proj',
                                                     True: 'http://localhost/proj'}
    assert Builder()._get_links(req, 'def')[1]['href'] == 'http://localhost/proj/servers/def'


def test_version_ranges_named_in_code_are_parsed_once():
    req_version = avr.APIVersionRequest('2.47')
    assert req_version.matches('2.1', '2.47') and not req_version.matches('2.48')
    assert req_version.matches(None, '2.100') and not req_version.matches('2.3', '2.9')
    assert avr._as_version('2.47') is avr._as_version('2.47')


def test_request_id_names_the_request_and_keeps_a_global_id():
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        return _app()(environ, start_response)
    glob = 'req-12345678-1234-1234-1234-123456789012'
    req = webob.Request.blank('/x', headers={'X-Openstack-Request-Id': glob})
    resp = req.get_response(requestlog.ComputeRequestId(app))
    own = seen['openstack.request_id']
    assert own.startswith('req-') and own != glob
    assert seen['openstack.global_request_id'] == glob
    assert resp.headers['X-Openstack-Request-Id'] == own
    assert resp.headers['X-Compute-Request-Id'] == own
    bogus = webob.Request.blank('/x', headers={'X-Openstack-Request-Id': 'not-an-id'})
    seen.clear()
    bogus.get_response(requestlog.ComputeRequestId(app))
    assert 'openstack.global_request_id' not in seen


def test_size_limit_refuses_a_long_declared_body_in_the_fault_format():
    limiter = sizelimit.RequestBodySizeLimiter(_app())
    req = webob.Request.blank('/x', method='POST', body=b'x' * (limiter.limit + 1))
    resp = req.get_response(limiter)
    assert resp.status_int == 413
    assert resp.json['overLimit']['code'] == 413


def test_size_limit_stops_a_body_without_length_when_it_grows_too_long():
    def reader(environ, start_response):
        environ['wsgi.input'].read()
        return _app()(environ, start_response)
    limiter = sizelimit.RequestBodySizeLimiter(reader)
    req = webob.Request.blank('/x', method='POST')
    req.environ['wsgi.input'] = io.BytesIO(b'x' * (limiter.limit + 10))
    req.environ['wsgi.input_terminated'] = True  # as servers mark a chunked body
    req.environ.pop('CONTENT_LENGTH', None)
    resp = req.get_response(limiter)
    assert resp.status_int == 413 and resp.json['overLimit']['code'] == 413
    small = webob.Request.blank('/x', method='POST')
    small.environ['wsgi.input'] = io.BytesIO(b'x' * 10)
    small.environ.pop('CONTENT_LENGTH', None)
    assert small.get_response(limiter).status_int == 200


def test_cors_is_no_layer_without_an_allowed_origin(monkeypatch):
    app = _app()
    assert openstack.cors_filter_factory({})(app) is app
    # A configuration file with a [cors] section, as the service would have parsed.
    monkeypatch.setattr(CONF, 'list_all_sections', lambda: ['DEFAULT', 'cors'])
    assert openstack.cors_filter_factory({})(app) is app  # a section without origins
    CONF.set_override('allowed_origin', ['https://dash.example'], group='cors')
    try:
        layer = openstack.cors_filter_factory({})(app)
        assert layer is not app
        req = webob.Request.blank('/x', headers={'Origin': 'https://dash.example'})
        resp = req.get_response(layer)
        assert resp.headers['Access-Control-Allow-Origin'] == 'https://dash.example'
    finally:
        CONF.clear_override('allowed_origin', group='cors')
