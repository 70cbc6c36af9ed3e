"""Fixtures of the volume client's tests: the Cinder test double, keystone-less or
behind a stand-in Keystone (keystoneauth's admin_token plugin)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import plugin as ks_plugin

from novalite import context as nl_context
from novalite import transient
from novalite.conf import CONF
from novalite.volume import client
from tests.unit.volume.cinder_double import CinderDouble

CINDER_SERVICE_TOKEN = 'cinder-service-user-token'
SERVICE_USER_TOKEN = 'service-user-token'


def _clear(group: str, *names: str) -> None:
    for name in names:
        CONF.clear_override(name, group=group)


@pytest.fixture
def cinder(monkeypatch: pytest.MonkeyPatch) -> Iterator[CinderDouble]:
    """A keystone-less Cinder double at ``[cinder] endpoint_template``; no waiting
    between retries."""
    double = CinderDouble().start()
    # keystoneauth reads a delay of 0 as its default (growing from 0.5 s).
    monkeypatch.setattr(client, 'RETRY_DELAY', 0.001)
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)
    CONF.set_override('endpoint_template', double.url + '/v3', group='cinder')
    client.reset()
    try:
        yield double
    finally:
        double.stop()
        _clear('cinder', 'endpoint_template', 'http_retries', 'cross_az_attach')
        client.reset()


@pytest.fixture
def keystone(cinder: CinderDouble) -> Iterator[None]:
    """``[cinder]`` with a service user: keystoneauth's admin_token plugin, whose token
    is fixed (no Keystone needed)."""
    for group in ('cinder', 'service_user'):
        CONF.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                           group=group)
    CONF.set_override('auth_type', 'admin_token', group='cinder')
    CONF.set_override('token', CINDER_SERVICE_TOKEN, group='cinder')
    CONF.set_override('endpoint', cinder.url + '/v3', group='cinder')
    client.reset()
    try:
        yield
    finally:
        _clear('cinder', 'auth_type', 'token', 'endpoint', 'catalog_info', 'os_region_name')
        client.reset()


@pytest.fixture
def service_token(keystone: None) -> Iterator[None]:
    """``[service_user] send_service_user_token`` with its own admin_token user."""
    CONF.set_override('send_service_user_token', True, group='service_user')
    CONF.set_override('auth_type', 'admin_token', group='service_user')
    CONF.set_override('token', SERVICE_USER_TOKEN, group='service_user')
    client.reset()
    try:
        yield
    finally:
        _clear('service_user', 'send_service_user_token', 'auth_type', 'token')
        client.reset()


def user(token: str | None = 'alice-token',
         user_auth_plugin: ks_plugin.BaseAuthPlugin | None = None,
         service_catalog: list[dict[str, Any]] | None = None) -> nl_context.RequestContext:
    """Alice of project alpha, a member."""
    return nl_context.RequestContext(user_id='alice', project_id='alpha',
                                     roles=['member', 'reader'], auth_token=token,
                                     overwrite=False, user_auth_plugin=user_auth_plugin,
                                     service_catalog=service_catalog)
