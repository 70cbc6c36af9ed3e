"""Whose credentials the Glance client calls with: the caller's token for a user's
call (Glance then shows the user only what the user may see), the service user only
for an administrator's context without one (issue 20: another project's private
snapshot was visible, deletable and bootable through the service user's admin)."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from keystoneauth1 import loading as ks_loading

from novalite import context as nl_context
from novalite.conf import CONF
from novalite.image import glance
from tests.fixtures.wsgi_server import WSGIServer

IMAGE = '6f5b0e4a-9d3c-4f6e-8a43-0c1d2e3f4a5b'
SERVICE_TOKEN = 'service-secret'


class RecordingGlance:
    """Answers every image as active and records who asked."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str | None]] = []
        self.server = WSGIServer(self)

    def __call__(self, environ, start_response):
        self.seen.append({'path': environ['PATH_INFO'],
                          'token': environ.get('HTTP_X_AUTH_TOKEN'),
                          'project': environ.get('HTTP_X_PROJECT_ID')})
        body = json.dumps({'id': IMAGE, 'status': 'active'}).encode()
        start_response('200 OK', [('Content-Type', 'application/json'),
                                  ('Content-Length', str(len(body)))])
        return [body]


@pytest.fixture
def server() -> Iterator[RecordingGlance]:
    recording = RecordingGlance()
    recording.server.start()
    CONF.set_override('endpoint_override', recording.server.url, group='glance')
    CONF.set_override('num_retries', 0, group='glance')
    glance.reset()
    try:
        yield recording
    finally:
        recording.server.stop()
        CONF.clear_override('endpoint_override', group='glance')
        CONF.clear_override('num_retries', group='glance')
        glance.reset()


@pytest.fixture
def service_user(server):
    """``[glance]`` with a service user (keystoneauth's admin_token plugin)."""
    CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='glance')
    CONF.set_override('auth_type', 'admin_token', group='glance')
    CONF.set_override('token', SERVICE_TOKEN, group='glance')
    CONF.set_override('endpoint', server.server.url, group='glance')
    glance.reset()
    try:
        yield
    finally:
        for name in ('auth_type', 'token', 'endpoint'):
            CONF.clear_override(name, group='glance')
        glance.reset()


def _user(token: str | None = 'alice-token', **kwargs) -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='alice', project_id='alpha',
                                     roles=['member', 'reader'], auth_token=token, **kwargs)


def test_a_user_call_carries_the_user_s_token_not_the_service_user_s(server, service_user):
    glance.API().get(_user(), IMAGE)
    glance.API().list_images(_user(), {})
    assert [s['token'] for s in server.seen] == ['alice-token', 'alice-token']


def test_the_user_s_token_survives_rpc(server, service_user):
    over_rpc = nl_context.RequestContext.from_dict(_user().to_dict())
    glance.API().get(over_rpc, IMAGE)
    assert server.seen[-1]['token'] == 'alice-token'


def test_the_service_user_serves_an_admin_context_without_a_token(server, service_user):
    glance.API().get(nl_context.get_admin_context(), IMAGE)
    assert server.seen[-1]['token'] == SERVICE_TOKEN


def test_a_user_context_without_a_token_gets_no_credentials(server, service_user):
    glance.API().get(_user(token=None), IMAGE)
    assert server.seen[-1]['token'] is None


def test_keystone_less_the_identity_rides_along(server):
    glance.API().get(_user(token='alice:alpha'), IMAGE)
    assert server.seen[-1] == {'path': '/v2/images/%s' % IMAGE, 'token': 'alice:alpha',
                               'project': 'alpha'}


def test_without_endpoint_override_glance_is_found_in_the_caller_s_catalog(server):
    url = server.server.url
    CONF.clear_override('endpoint_override', group='glance')
    catalog = [{'type': 'image', 'name': 'glance', 'endpoints': [
        {'region': 'RegionOne', 'publicURL': url + '/v2', 'internalURL': url + '/v2'}]},
        {'type': 'identity', 'name': 'keystone', 'endpoints': []}]
    ctx = nl_context.RequestContext.from_dict(_user(service_catalog=catalog).to_dict())
    assert [s['type'] for s in ctx.service_catalog] == ['image']
    glance.API().get(ctx, IMAGE)
    assert server.seen[-1]['path'] == '/v2/images/%s' % IMAGE
