"""Tests of the Resource: microversions, body parsing and the mapping of errors to faults."""
from __future__ import annotations

import json

import pytest
import routes
import routes.middleware
import webob.dec

from novalite import exception
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi


class _Controller(wsgi.Controller):
    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error = error
        self.bodies: list = []

    def index(self, req: wsgi.Request) -> dict:
        if self.error is not None:
            raise self.error
        return {'version': req.api_version_request.get_string()}

    @wsgi.response(201)
    def create(self, req: wsgi.Request, body: dict) -> wsgi.ResponseObject:
        self.bodies.append(body)
        return wsgi.ResponseObject(body, headers={'Location': 'http://x/1'})

    @wsgi.response(204)
    def delete(self, req: wsgi.Request, id: str) -> None:
        return None

    @wsgi.api_version('2.1', '2.9')
    def show(self, req: wsgi.Request, id: str) -> dict:
        return {'impl': 'old', 'id': id}

    # One method name per microversion range, as controllers define them.
    @wsgi.api_version('2.10', '2.20')
    def show(self, req: wsgi.Request, id: str) -> dict:  # noqa: F811
        return {'impl': 'new', 'id': id}


def _app(controller: _Controller):
    mapper = routes.Mapper()
    resource = wsgi.Resource(controller)
    mapper.connect('/things', controller=resource, action='index',
                   conditions={'method': ['GET']})
    mapper.connect('/things', controller=resource, action='create',
                   conditions={'method': ['POST']})
    mapper.connect('/things/{id}', controller=resource, action='show',
                   conditions={'method': ['GET']})
    mapper.connect('/things/{id}', controller=resource, action='delete',
                   conditions={'method': ['DELETE']})

    @webob.dec.wsgify
    def dispatch(req):
        return req.environ['wsgiorg.routing_args'][1]['controller']
    return routes.middleware.RoutesMiddleware(dispatch, mapper)


def _get(app, path='/things', method='GET', headers=None, body=None, content_type=None):
    req = webob.Request.blank(path, method=method, headers=headers or {})
    if body is not None:
        req.body = body
        if content_type:
            req.content_type = content_type
    return req.get_response(app)


@pytest.mark.parametrize('headers, expected', [
    ({}, '2.1'),
    ({'OpenStack-API-Version': 'compute 2.47'}, '2.47'),
    ({'X-OpenStack-Nova-API-Version': '2.26'}, '2.26'),
    ({'OpenStack-API-Version': 'compute latest'}, '2.104'),
    # A header for another service does not select a compute version.
    ({'OpenStack-API-Version': 'volume 3.5'}, '2.1'),
])
def test_microversion_is_read_from_the_headers(headers, expected):
    resp = _get(_app(_Controller()), headers=headers)
    assert resp.status_int == 200
    assert resp.json == {'version': expected}
    assert resp.headers['OpenStack-API-Version'] == 'compute %s' % expected
    assert resp.headers['X-OpenStack-Nova-API-Version'] == expected
    assert 'OpenStack-API-Version' in resp.headers['Vary']
    assert 'X-OpenStack-Nova-API-Version' in resp.headers['Vary']


@pytest.mark.parametrize('value, code, key', [
    ('compute 2', 400, 'badRequest'),
    ('compute 2.x', 400, 'badRequest'),
    ('compute 2.01', 400, 'badRequest'),
    ('compute 2.105', 406, 'computeFault'),
    ('compute 1.9', 406, 'computeFault'),
    ('compute 3.0', 406, 'computeFault'),
])
def test_bad_microversion_is_rejected(value, code, key):
    resp = _get(_app(_Controller()), headers={'OpenStack-API-Version': value})
    assert resp.status_int == code
    assert resp.json[key]['code'] == code
    assert 'Vary' in resp.headers


def test_api_version_decorator_dispatches_by_range_and_404s_outside():
    app = _app(_Controller())
    assert _get(app, '/things/a').json == {'impl': 'old', 'id': 'a'}
    resp = _get(app, '/things/a', headers={'OpenStack-API-Version': 'compute 2.10'})
    assert resp.json == {'impl': 'new', 'id': 'a'}
    resp = _get(app, '/things/a', headers={'OpenStack-API-Version': 'compute 2.21'})
    assert resp.status_int == 404
    assert 'itemNotFound' in resp.json


def test_body_is_parsed_and_response_code_and_headers_kept():
    controller = _Controller()
    resp = _get(_app(controller), method='POST', body=b'{"a": 1}',
                content_type='application/json')
    assert resp.status_int == 201
    assert resp.headers['Location'] == 'http://x/1'
    assert resp.json == {'a': 1}
    assert controller.bodies == [{'a': 1}]


def test_body_without_content_type_is_json():
    controller = _Controller()
    resp = _get(_app(controller), method='POST', body=b'{"a": 2}')
    assert resp.status_int == 201
    assert controller.bodies == [{'a': 2}]


def test_malformed_json_is_400_and_controller_not_called():
    controller = _Controller()
    resp = _get(_app(controller), method='POST', body=b'{"a": ',
                content_type='application/json')
    assert resp.status_int == 400
    assert resp.json == {'badRequest': {'code': 400, 'message': 'Malformed request body'}}
    assert controller.bodies == []


def test_unsupported_content_type_is_415():
    resp = _get(_app(_Controller()), method='POST', body=b'<a/>', content_type='text/xml')
    assert resp.status_int == 415
    assert resp.json['badMediaType']['message'] == 'Unsupported Content-Type'


def test_no_content_response_has_empty_body():
    resp = _get(_app(_Controller()), '/things/1', method='DELETE')
    assert resp.status_int == 204
    assert resp.body == b''


@pytest.mark.parametrize('error, code, key', [
    (exception.FlavorNotFound(flavor_id='x'), 404, 'itemNotFound'),
    (exception.InvalidInput(reason='nope'), 400, 'badRequest'),
    (exception.PolicyNotAuthorized(action='a'), 403, 'forbidden'),
    (exception.FlavorExists(name='n'), 409, 'conflictingRequest'),
    (exception.ServiceUnavailable(), 503, 'serviceUnavailable'),
    (exception.NoValidHost(reason='none fit'), 500, 'computeFault'),
])
def test_novalite_exceptions_keep_their_code_and_message(error, code, key):
    resp = _get(_app(_Controller(error)))
    assert resp.status_int == code
    assert resp.json == {key: {'code': code, 'message': error.format_message()}}
    assert resp.headers['X-OpenStack-Nova-API-Version'] == '2.1'


def test_unsafe_500_and_unexpected_errors_hide_their_text(caplog):
    for error in (exception.ObjectActionError(action='a', reason='secret db detail'),
                  RuntimeError('secret internals')):
        resp = _get(_app(_Controller(error)))
        assert resp.status_int == 500
        message = resp.json['computeFault']['message']
        assert message.startswith('Unexpected API Error.')
        assert 'secret' not in message
    assert 'secret internals' in caplog.text


class TestAPIVersionRequest:
    def test_ordering_and_matches(self):
        v = avr.APIVersionRequest('2.10')
        assert avr.APIVersionRequest('2.9') < v < avr.APIVersionRequest('2.11')
        assert v.matches('2.10', '2.10')
        assert v.matches('2.1', None)
        assert not v.matches('2.11')
        assert not v.matches(None, '2.9')
        assert avr.MAX_VERSION.get_string() == '2.104'
        assert avr.MIN_VERSION.get_string() == '2.1'

    @pytest.mark.parametrize('bad', ['2', '2.', 'a.b', '2.1.1', '02.1', ''])
    def test_bad_strings(self, bad):
        with pytest.raises(exception.InvalidAPIVersionString):
            avr.APIVersionRequest(bad)


def test_json_of_fault_is_valid_for_every_mapped_code():
    from novalite.api.openstack import faults
    for code in faults.FAULT_NAMES:
        resp = faults.json_fault(code, 'm')
        assert json.loads(resp.body) == {faults.FAULT_NAMES[code]: {'code': code,
                                                                    'message': 'm'}}
