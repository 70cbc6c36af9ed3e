"""Whose credentials a Neutron call carries: the service user's, the caller's token, or
none (a keystone-less Neutron)."""
from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite.conf import CONF
from novalite.network import client as neutron_client

ENDPOINT = 'http://neutron.example:9696'


class RecordingAdapter:
    """Stands in for the keystoneauth adapter: records each request's arguments."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def get_endpoint(self) -> str:
        return ENDPOINT

    def request(self, url: str, method: str, **kwargs: Any) -> types.SimpleNamespace:
        self.calls.append(dict(kwargs, url=url, method=method))
        return types.SimpleNamespace(status_code=200, content=b'{}',
                                     json=lambda: {'networks': []})


@pytest.fixture
def adapter(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingAdapter]:
    recording = RecordingAdapter()
    monkeypatch.setattr(neutron_client, '_ADAPTER', recording)
    yield recording


@pytest.fixture
def keystone() -> Iterator[None]:
    CONF.set_override('auth_type', 'password', group='neutron')
    yield
    CONF.clear_override('auth_type', group='neutron')


def _user(token: str | None, roles: tuple[str, ...] = ('member', 'reader')
          ) -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=list(roles),
                                     auth_token=token, overwrite=False)


def test_a_user_call_carries_the_users_token_to_the_catalogs_endpoint(
        adapter: RecordingAdapter, keystone: None) -> None:
    neutron_client.Client(_user('user-token')).list_networks()
    call = adapter.calls[-1]
    assert call['headers'] == {'X-Auth-Token': 'user-token'}
    assert call['authenticated'] is False
    assert call['endpoint_override'] == ENDPOINT


def test_an_admin_call_goes_as_the_service_user(adapter: RecordingAdapter,
                                                keystone: None) -> None:
    for client in (neutron_client.Client(None, admin=True),
                   neutron_client.Client(_user('user-token'), admin=True)):
        client.list_networks()
        call = adapter.calls[-1]
        # The adapter's session authenticates it (the service user's token).
        assert 'headers' not in call and 'authenticated' not in call


def test_an_admin_context_with_no_token_goes_as_the_service_user(
        adapter: RecordingAdapter, keystone: None) -> None:
    neutron_client.Client(nl_context.get_admin_context()).list_networks()
    assert 'headers' not in adapter.calls[-1]


def test_a_user_context_with_no_token_is_refused(adapter: RecordingAdapter,
                                                 keystone: None) -> None:
    with pytest.raises(neutron_client.NoUserToken) as caught:
        neutron_client.Client(_user(None))
    assert caught.value.code == 401
    assert adapter.calls == []


def test_keystone_less_every_call_goes_unauthenticated(adapter: RecordingAdapter) -> None:
    assert not CONF.neutron.auth_type
    neutron_client.Client(_user('user:p1')).list_networks()
    neutron_client.Client(_user(None)).list_networks()
    for call in adapter.calls:
        assert 'headers' not in call and 'endpoint_override' not in call


def test_keystone_less_the_services_calls_carry_the_service_role(
        adapter: RecordingAdapter) -> None:
    """Neutron's noauth takes the roles of ``X-Roles``; only the service role may make,
    activate and delete port bindings (a live migration's)."""
    neutron_client.Client(None, admin=True).list_networks()
    neutron_client.Client(_user('user:p1'), admin=True).list_networks()
    neutron_client.Client(_user('user:p1')).list_networks()
    assert [c.get('headers') for c in adapter.calls] == [
        {'X-Roles': 'service'}, {'X-Roles': 'service'}, None]
