"""Whose credentials and which headers a Cinder call carries: keystone-less (the
caller's ``user:project`` and the service role), or with Keystone (the caller's token,
the ``[cinder]`` service user for an admin context without one, and the service token
of ``[service_user]`` when configured)."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite.conf import CONF
from novalite.volume import cinder as cinder_api
from novalite.volume import client
from tests.unit.volume.cinder_double import CinderDouble
from tests.unit.volume.conftest import CINDER_SERVICE_TOKEN, SERVICE_USER_TOKEN, user


def _create(ctx: nl_context.RequestContext) -> dict:
    return cinder_api.API().create(ctx, 1, 'v1', None)


def test_configured_needs_an_endpoint_template_or_keystone(cinder: CinderDouble) -> None:
    assert cinder_api.configured()
    CONF.clear_override('endpoint_template', group='cinder')
    assert not cinder_api.configured()
    CONF.set_override('auth_type', 'password', group='cinder')
    try:
        assert cinder_api.configured()
    finally:
        CONF.clear_override('auth_type', group='cinder')


def test_keystone_less_a_call_carries_the_callers_user_and_project_and_the_service_role(
        cinder: CinderDouble) -> None:
    volume = _create(user(token='alice:alpha'))
    cinder_api.API().get(user(token=None), volume['id'])
    for seen in cinder.requests():
        assert seen.headers['X-Auth-Token'] == 'alice:alpha'
        assert seen.headers['X-Service-Roles'] == 'service'
        assert seen.headers['Openstack-Api-Version'] == 'volume 3.54'
        assert 'X-Service-Token' not in seen.headers
    # No project in the path: Cinder's noauth takes it from the token.
    assert [s.path for s in cinder.requests()] == ['/v3/volumes',
                                                    '/v3/volumes/%s' % volume['id']]


def test_keystone_less_an_admin_context_without_identity_goes_as_novalite(
        cinder: CinderDouble) -> None:
    cinder_api.API().get_all(nl_context.get_admin_context())
    assert cinder.requests()[-1].headers['X-Auth-Token'] == 'novalite:novalite'


def test_the_request_id_travels(cinder: CinderDouble) -> None:
    ctx = user()
    cinder_api.API().get_all(ctx)
    assert cinder.requests()[-1].headers['X-Openstack-Request-Id'] == ctx.global_id


def test_the_project_is_put_in_an_endpoint_template_that_asks_for_it(
        cinder: CinderDouble) -> None:
    CONF.set_override('endpoint_template', cinder.url + '/v3/%(project_id)s', group='cinder')
    cinder_api.API().get_all(user())
    assert cinder.requests()[-1].path == '/v3/alpha/volumes/detail'


def test_with_keystone_a_user_call_carries_the_users_token(cinder: CinderDouble,
                                                           keystone: None) -> None:
    volume = _create(user())
    cinder_api.API().get(user(), volume['id'])
    for seen in cinder.requests():
        assert seen.headers['X-Auth-Token'] == 'alice-token'
        assert 'X-Service-Roles' not in seen.headers
        assert 'X-Service-Token' not in seen.headers


def test_with_keystone_an_admin_context_without_a_token_goes_as_the_service_user(
        cinder: CinderDouble, keystone: None) -> None:
    cinder_api.API().get_all(nl_context.get_admin_context())
    assert cinder.requests()[-1].headers['X-Auth-Token'] == CINDER_SERVICE_TOKEN


def test_with_keystone_a_user_context_without_a_token_is_refused(
        cinder: CinderDouble, keystone: None) -> None:
    with pytest.raises(client.NoUserToken) as caught:
        cinder_api.API().get_all(user(token=None))
    assert caught.value.code == 401
    assert cinder.requests() == []


def test_with_a_service_user_every_call_also_carries_a_service_token(
        cinder: CinderDouble, service_token: None) -> None:
    cinder_api.API().get_all(user())
    cinder_api.API().get_all(nl_context.get_admin_context())
    seen = cinder.requests()
    assert [(s.headers['X-Auth-Token'], s.headers['X-Service-Token']) for s in seen] == [
        ('alice-token', SERVICE_USER_TOKEN), (CINDER_SERVICE_TOKEN, SERVICE_USER_TOKEN)]


def test_with_keystone_cinder_is_found_in_the_callers_catalog_by_catalog_info(
        cinder: CinderDouble, keystone: None) -> None:
    CONF.clear_override('endpoint_template', group='cinder')
    CONF.set_override('catalog_info', 'volumev3:cinderv3:internalURL', group='cinder')
    CONF.set_override('os_region_name', 'RegionTwo', group='cinder')
    catalog = [{'type': 'volumev3', 'name': 'cinderv3', 'endpoints': [
        {'region': 'RegionOne', 'publicURL': 'http://192.0.2.1/v3/alpha',
         'internalURL': 'http://192.0.2.1/v3/alpha'},
        {'region': 'RegionTwo', 'publicURL': 'http://192.0.2.2/v3/alpha',
         'internalURL': cinder.url + '/v3/alpha'}]}]
    plugin = nl_context._ContextAuthPlugin('alice-token', catalog)
    cinder_api.API().get_all(user(user_auth_plugin=plugin))
    assert cinder.requests()[-1].path == '/v3/alpha/volumes/detail'
    assert cinder.requests()[-1].headers['X-Auth-Token'] == 'alice-token'


def test_cinder_is_found_in_the_catalog_of_a_context_that_crossed_rpc(
        cinder: CinderDouble, keystone: None) -> None:
    CONF.clear_override('endpoint_template', group='cinder')
    catalog = [{'type': 'volumev3', 'name': 'cinderv3', 'endpoints': [
        {'region': 'RegionOne', 'publicURL': cinder.url + '/v3/alpha',
         'internalURL': cinder.url + '/v3/alpha'}]}]
    over_rpc = nl_context.RequestContext.from_dict(user(service_catalog=catalog).to_dict())
    cinder_api.API().get_all(over_rpc)
    assert cinder.requests()[-1].path == '/v3/alpha/volumes/detail'
    assert cinder.requests()[-1].headers['X-Auth-Token'] == 'alice-token'


def test_without_endpoint_template_or_keystone_cinder_cannot_be_reached(
        cinder: CinderDouble) -> None:
    CONF.clear_override('endpoint_template', group='cinder')
    with pytest.raises(cinder_api.exception.CinderConnectionFailed,
                       match='volume service'):
        cinder_api.API().get_all(user())
