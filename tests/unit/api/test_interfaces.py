"""os-interface and the addFixedIp/removeFixedIp actions over test doubles: the body
schemas by microversion, the view, and Nova's codes for each refusal."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from novalite import exception
from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import (
    interfaces,
    multinic,
    routes,
    server_actions,
)
from tests.unit.api.compute_api_double import ComputeAPIDouble
from tests.unit.api.conftest import call

NET = '3c5f3b0e-1b7e-4b9f-9f9a-3a1d2b6c7e80'
PORT = '6a0e4b1c-2d3f-4e5a-8b9c-0d1e2f3a4b5c'
SUBNET = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b'


def _port(port_id: str = PORT) -> dict[str, Any]:
    return {'id': port_id, 'network_id': NET, 'mac_address': 'fa:16:3e:00:00:01',
            'status': 'ACTIVE', 'device_id': 'the-server', 'binding:host_id': 'h1',
            'fixed_ips': [{'subnet_id': SUBNET, 'ip_address': '10.0.0.5'}]}


class InterfacesAPIDouble:
    """Answers like compute.api_interfaces.InterfacesAPI; ``error`` is raised by the
    next change; ``calls`` records (method, arguments)."""

    def __init__(self) -> None:
        self.ports = [_port()]
        self.calls: list[tuple[str, tuple]] = []
        self.error: Exception | None = None

    def _change(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))
        if self.error is not None:
            raise self.error

    def list_ports(self, context: Any, instance: Any) -> list[dict[str, Any]]:
        return self.ports

    def show_port(self, context: Any, instance: Any, port_id: str) -> dict[str, Any]:
        for port in self.ports:
            if port['id'] == port_id:
                return port
        raise exception.PortNotFound(port_id=port_id)

    @staticmethod
    def tags(instance: Any) -> dict[str, str | None]:
        return {PORT: 'nic1'}

    def attach_interface(self, context: Any, instance: Any, network_id: str | None,
                         port_id: str | None, requested_ip: str | None,
                         tag: str | None = None) -> dict[str, Any]:
        self._change('attach', network_id, port_id, requested_ip, tag)
        return {'id': PORT}

    def detach_interface(self, context: Any, instance: Any, port_id: str) -> None:
        self._change('detach', port_id)

    def add_fixed_ip(self, context: Any, instance: Any, network_id: str) -> None:
        self._change('add_fixed_ip', network_id)

    def remove_fixed_ip(self, context: Any, instance: Any, address: str) -> None:
        self._change('remove_fixed_ip', address)


@pytest.fixture
def compute() -> ComputeAPIDouble:
    return ComputeAPIDouble()


@pytest.fixture
def api() -> InterfacesAPIDouble:
    return InterfacesAPIDouble()


@pytest.fixture
def app(compute, api, monkeypatch):
    monkeypatch.setattr(multinic.api_interfaces, 'InterfacesAPI', lambda compute_api: api)
    router = routes.APIRouterV21({
        'interfaces': interfaces.InterfaceAttachmentController(compute, api),
        'server_actions': server_actions.ServerActionsController(compute)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


@pytest.fixture
def server(compute) -> str:
    return compute.add(project_id='demo').uuid


def _path(server: str, port: str | None = None) -> str:
    return '/v2.1/servers/%s/os-interface%s' % (server, '/' + port if port else '')


# -- reading ------------------------------------------------------------------------------

def test_list_shows_neutrons_ports_with_the_tag_from_2_70(app, server):
    resp = call(app, 'GET', _path(server), version='2.69')
    assert resp.status_int == 200
    assert resp.json == {'interfaceAttachments': [{
        'net_id': NET, 'port_id': PORT, 'mac_addr': 'fa:16:3e:00:00:01',
        'port_state': 'ACTIVE',
        'fixed_ips': [{'subnet_id': SUBNET, 'ip_address': '10.0.0.5'}]}]}
    tagged = call(app, 'GET', _path(server), version='2.70').json
    assert tagged['interfaceAttachments'][0]['tag'] == 'nic1'


def test_show_of_a_port_not_the_servers_is_404(app, server):
    assert call(app, 'GET', _path(server, PORT)).json['interfaceAttachment']['port_id'] == \
        PORT
    resp = call(app, 'GET', _path(server, str(uuid.uuid4())))
    assert resp.status_int == 404


def test_another_projects_server_is_not_found(app, compute):
    other = compute.add(project_id='other').uuid
    assert call(app, 'GET', _path(other)).status_int == 404


# -- attaching ----------------------------------------------------------------------------

def _attach(app, server, version='2.1', **attachment):
    return call(app, 'POST', _path(server), {'interfaceAttachment': attachment},
                version=version)


def test_attach_answers_with_the_attached_port(app, api, server):
    resp = _attach(app, server, net_id=NET, fixed_ips=[{'ip_address': '10.0.0.9'}])
    assert resp.status_int == 200, resp.body
    assert resp.json['interfaceAttachment']['port_id'] == PORT
    assert api.calls == [('attach', (NET, None, '10.0.0.9', None))]


def test_attach_with_no_network_or_port_lets_the_api_choose(app, api, server):
    assert _attach(app, server).status_int == 200
    assert api.calls == [('attach', (None, None, None, None))]


@pytest.mark.parametrize('attachment,version', [
    ({'net_id': 'not-a-uuid'}, '2.1'),
    ({'port_id': PORT, 'extra': 1}, '2.1'),
    ({'net_id': NET, 'fixed_ips': [{'ip_address': '10.0.0.1'},
                                   {'ip_address': '10.0.0.2'}]}, '2.1'),
    ({'net_id': NET, 'fixed_ips': [{'ip_address': 'ten'}]}, '2.1'),
    ({'net_id': NET, 'tag': 'nic'}, '2.48'),
    ({'net_id': NET, 'tag': 'a/b'}, '2.49'),
    ({'net_id': NET, 'port_id': PORT}, '2.1'),
    ({'port_id': PORT, 'fixed_ips': [{'ip_address': '10.0.0.1'}]}, '2.1'),
])
def test_attach_bodies_refused(app, api, server, attachment, version):
    resp = _attach(app, server, version, **attachment)
    assert resp.status_int == 400, resp.body
    assert api.calls == []


def test_a_tag_from_2_49(app, api, server):
    assert _attach(app, server, '2.49', net_id=NET, tag='nic1').status_int == 200
    assert api.calls == [('attach', (NET, None, None, 'nic1'))]


@pytest.mark.parametrize('error,code', [
    (exception.NetworkAmbiguous(), 400),
    (exception.InterfaceAttachFailedNoNetwork(project_id='demo'), 400),
    (exception.AttachInterfaceNotSupported(instance_uuid='x'), 400),
    (exception.PortNotFound(port_id=PORT), 404),
    (exception.NetworkNotFound(network_id=NET), 404),
    (exception.PortInUse(port_id=PORT), 409),
    (exception.FixedIpAlreadyInUse(address='10.0.0.9', instance_uuid='x'), 409),
    (exception.InstanceIsLocked(instance_uuid='x'), 409),
    (exception.PortLimitExceeded(), 403),
    (exception.InterfaceAttachFailed(instance_uuid='x'), 500),
])
def test_attach_refusals_have_novas_codes(app, api, server, error, code):
    api.error = error
    resp = _attach(app, server, net_id=NET)
    assert resp.status_int == code, resp.body
    if code == 500:
        assert 'Failed to attach network adapter device' in resp.text


def test_a_server_in_the_wrong_state_is_409_in_novas_words(app, api, server):
    api.error = exception.InstanceInvalidState(attr='vm_state', instance_uuid=server,
                                               state='building', method='attach_interface')
    resp = _attach(app, server, net_id=NET)
    assert resp.status_int == 409
    assert resp.json['conflictingRequest']['message'] == (
        "Cannot 'attach_interface' instance %s while it is in vm_state building" % server)


# -- detaching ----------------------------------------------------------------------------

def test_detach_is_202(app, api, server):
    resp = call(app, 'DELETE', _path(server, PORT))
    assert resp.status_int == 202 and not resp.body
    assert api.calls == [('detach', (PORT,))]
    api.error = exception.PortNotFound(port_id=PORT)
    assert call(app, 'DELETE', _path(server, PORT)).status_int == 404


# -- addFixedIp and removeFixedIp ---------------------------------------------------------

def _action(app, server, body, version='2.43'):
    return call(app, 'POST', '/v2.1/servers/%s/action' % server, body, version=version)


def test_fixed_ip_actions_until_2_43(app, api, server):
    assert _action(app, server, {'addFixedIp': {'networkId': NET}}).status_int == 202
    assert _action(app, server, {'removeFixedIp': {'address': '10.0.0.5'}}).status_int \
        == 202
    assert api.calls == [('add_fixed_ip', (NET,)), ('remove_fixed_ip', ('10.0.0.5',))]
    for body in ({'addFixedIp': {'networkId': NET}},
                 {'removeFixedIp': {'address': '10.0.0.5'}}):
        assert _action(app, server, body, '2.44').status_int == 404
    assert len(api.calls) == 2


@pytest.mark.parametrize('body', [
    {'addFixedIp': {}}, {'addFixedIp': {'networkId': ''}},
    {'addFixedIp': {'networkId': NET, 'other': 1}},
    {'removeFixedIp': {'address': 'not-an-ip'}}, {'removeFixedIp': {}},
])
def test_fixed_ip_bodies_refused(app, api, server, body):
    assert _action(app, server, body).status_int == 400
    assert api.calls == []


def test_removing_an_address_the_server_lacks_is_400(app, api, server):
    api.error = exception.FixedIpNotFoundForInstance(instance_uuid=server, ip='10.9.9.9')
    resp = _action(app, server, {'removeFixedIp': {'address': '10.9.9.9'}})
    assert resp.status_int == 400
    assert "does not have fixed IP '10.9.9.9'" in resp.text
    api.error = exception.NetworkNotFound(network_id=NET)
    assert _action(app, server, {'addFixedIp': {'networkId': NET}}).status_int == 404
