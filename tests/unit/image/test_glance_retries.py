"""How the Glance client tries again: keystoneauth retries a read that could not
connect or was answered 5xx ``[glance] num_retries`` times; a download whose data broke
off half-way starts again as many times; writes are never tried again."""
from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Iterator

import pytest

from novalite import context as nl_context
from novalite import exception, transient
from novalite.conf import CONF
from novalite.image import glance
from tests.fixtures.wsgi_server import WSGIServer

IMAGE = '6f5b0e4a-9d3c-4f6e-8a43-0c1d2e3f4a5b'
DATA = b'x' * 4096


class FlakyGlance:
    """Answers 500 to the first ``failures`` requests of each path; the image's data
    is cut short (a broken connection) ``broken_downloads`` times."""

    def __init__(self) -> None:
        self.failures = 0
        self.broken_downloads = 0
        self.requests: list[tuple[str, str]] = []
        self.server = WSGIServer(self)

    def __call__(self, environ, start_response):
        method, path = environ['REQUEST_METHOD'], environ['PATH_INFO']
        self.requests.append((method, path))
        if sum(1 for seen in self.requests if seen == (method, path)) <= self.failures:
            start_response('500 Internal Server Error', [('Content-Length', '4')])
            return [b'boom']
        if path.endswith('/file'):
            if self.broken_downloads:
                self.broken_downloads -= 1
                # Content-Length promises all the data; half of it comes.
                start_response('200 OK', [('Content-Type', 'application/octet-stream'),
                                          ('Content-Length', str(len(DATA)))])
                return [DATA[:len(DATA) // 2]]
            start_response('200 OK', [('Content-Type', 'application/octet-stream'),
                                      ('Content-Length', str(len(DATA)))])
            return [DATA]
        body = json.dumps({'id': IMAGE, 'status': 'active', 'size': len(DATA),
                           'checksum': hashlib.md5(DATA, usedforsecurity=False).hexdigest()
                           }).encode()
        start_response('200 OK', [('Content-Type', 'application/json'),
                                  ('Content-Length', str(len(body)))])
        return [body]


@pytest.fixture
def flaky(monkeypatch) -> Iterator[FlakyGlance]:
    monkeypatch.setattr(glance, 'RETRY_DELAY', 0.01)
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)
    server = FlakyGlance()
    server.server.start()
    CONF.set_override('endpoint_override', server.server.url, group='glance')
    CONF.set_override('num_retries', 2, group='glance')
    glance.reset()
    try:
        yield server
    finally:
        server.server.stop()
        CONF.clear_override('endpoint_override', group='glance')
        CONF.clear_override('num_retries', group='glance')
        glance.reset()


@pytest.fixture
def ctxt() -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])


def test_a_5xx_read_is_tried_num_retries_times_more(flaky, ctxt):
    flaky.failures = 2
    assert glance.API().get(ctxt, IMAGE)['id'] == IMAGE
    assert flaky.requests == [('GET', '/v2/images/%s' % IMAGE)] * 3


def test_a_read_answered_5xx_every_time_is_an_image_service_error(flaky, ctxt):
    flaky.failures = 3
    with pytest.raises(exception.ImageServiceError, match='answered 500'):
        glance.API().get(ctxt, IMAGE)
    assert len(flaky.requests) == 3


def test_a_write_is_never_tried_again(flaky, ctxt):
    flaky.failures = 1
    with pytest.raises(exception.ImageServiceError, match='answered 500'):
        glance.API().create(ctxt, {'name': 'x'})
    assert flaky.requests == [('POST', '/v2/images')]


def test_a_download_that_broke_off_starts_again(flaky, ctxt, tmp_path):
    flaky.broken_downloads = 2
    dst = tmp_path / 'image'
    glance.API().download(ctxt, IMAGE, str(dst))
    assert dst.read_bytes() == DATA
    assert flaky.requests.count(('GET', '/v2/images/%s/file' % IMAGE)) == 3
    assert [p.name for p in tmp_path.iterdir()] == ['image']


def test_a_download_broken_every_time_is_a_connection_failure(flaky, ctxt, tmp_path):
    flaky.broken_downloads = 3
    with pytest.raises(exception.GlanceConnectionFailed):
        glance.API().download(ctxt, IMAGE, str(tmp_path / 'image'))
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_glance_is_tried_again_then_a_connection_failure(ctxt, monkeypatch):
    monkeypatch.setattr(glance, 'RETRY_DELAY', 0.01)
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    CONF.set_override('endpoint_override', 'http://127.0.0.1:%d' % port, group='glance')
    CONF.set_override('num_retries', 2, group='glance')
    glance.reset()
    tries = []
    original = glance._session

    def counting():
        session = original()
        send = session.session.request  # the requests.Session under keystoneauth's

        def request(*args, **kwargs):
            tries.append(args)
            return send(*args, **kwargs)
        monkeypatch.setattr(session.session, 'request', request)
        return session
    monkeypatch.setattr(glance, '_session', counting)
    try:
        with pytest.raises(exception.GlanceConnectionFailed):
            glance.API().get(ctxt, IMAGE)
    finally:
        CONF.clear_override('endpoint_override', group='glance')
        CONF.clear_override('num_retries', group='glance')
        glance.reset()
    assert len(tries) == 3
